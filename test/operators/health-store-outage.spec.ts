import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SchedulerLock, type LockEvent } from '../../lib/index.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

/** How long the store is away: the 10 s. */
const OUTAGE_MS = 10_000;

@Injectable()
class Jobs {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('*/2 * * * * *', { name: 'every-2s' })
  every2s() {}
}

const redis = usePrivateRedisServer();
afterEach(() => closeSchedulerApps());

describe('a store outage of 10 s, on a real redis-server', () => {
  it('reports the occurrences it cost as missed once the store is back', async () => {
    const app = await startSchedulerApp({
      lock: {
        redis: redis.server.url,
        defaultLockAtMostFor: '1m',
        heartbeatInterval: '1s',
        health: { grace: '500ms' },
      },
      providers: [Jobs],
    });
    const isRun = (event: LockEvent) => event.type === 'finished' && event.jobName === 'every-2s';
    await nextEvent(app.history$, isRun, 5_000);
    const missed = nextEvent(app.events$, (event) => event.type === 'missed', OUTAGE_MS + 15_000);

    // The server stops answering (its connections stay open), then answers again: the process is ours, by PID.
    const pausedAt = Date.now();
    process.kill(redis.server.pid!, 'SIGSTOP');
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    process.kill(redis.server.pid!, 'SIGCONT');
    const resumedAt = Date.now();

    const report = await missed;
    if (report.type !== 'missed') throw new Error('not a missed event');
    const times = report.occurrences.map((occurrence) => occurrence.getTime());
    // Every occurrence due while the store was away, each once, and none outside that window.
    expect(times.length).toBeGreaterThanOrEqual(OUTAGE_MS / 2_000 - 1);
    expect(new Set(times).size).toBe(times.length);
    for (const at of times) {
      expect(at).toBeGreaterThan(pausedAt - 2_000);
      expect(at).toBeLessThan(resumedAt);
    }
  }, 40_000);
});
