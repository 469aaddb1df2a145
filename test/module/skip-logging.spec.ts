import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { InMemoryLockProvider, SchedulerLock } from '../../lib/index.js';
import { type LockConfiguration } from '../../lib/provider/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

afterEach(closeSchedulerApps);

const LOCK = 'held-by-another-node';
/** Skipped ticks watched: enough to show a line per tick, or none. */
const SKIPS = 3;

@Injectable()
class Ticking {
  @SchedulerLock({ name: LOCK })
  @Interval(50)
  tick() {}
}

/** An app whose job's lock another node holds: every tick is skipped (`locked`). */
async function skippedTicksLogged(logSkips: boolean | undefined): Promise<string[]> {
  const provider = new InMemoryLockProvider();
  const held: LockConfiguration = { name: LOCK, lockAtMostFor: 60_000, lockAtLeastFor: 0 };
  expect(await provider.lock(held)).toBeDefined();
  const app = await startSchedulerApp({
    lock: { provider, defaultLockAtMostFor: '1m', logSkips },
    providers: [Ticking],
  });

  await events(app.history$, jobEvent('skipped', 'Ticking.tick'), SKIPS);
  await app.close();
  return app.logs.texts('debug', 'SchedulerLock');
}

describe('skipped ticks', () => {
  it('are events only by default: no line, not even at debug level', async () => {
    expect(await skippedTicksLogged(undefined)).toEqual([]);
  });

  it('are logged at debug level with logSkips: true, one line per skipped tick', async () => {
    const lines = await skippedTicksLogged(true);

    expect(lines.length).toBeGreaterThanOrEqual(SKIPS);
    expect(new Set(lines)).toEqual(new Set([`Lock "${LOCK}" (job "Ticking.tick"): skipping this run (locked)`]));
  });
});
