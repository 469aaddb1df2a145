import { jest } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Interval, ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LockEvents, SchedulerLock, SchedulerLockModule, currentLock, type LockEvent } from '../../lib/index.js';
import { type LockProvider } from '../../lib/provider/index.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { runClockUntil } from '../support/fake-clock.js';
import { events } from '../support/lock-events.js';
import { OutageProvider } from '../support/lock-provider-doubles.js';

/** What the job does on its next tick, set by each test. */
const body: { run: () => Promise<void> } = { run: async () => undefined };

@Injectable()
class ReportJob {
  @SchedulerLock({ name: 'report', keepAlive: { lease: '3s' } })
  @Interval('report-job', 30)
  async run(): Promise<void> {
    await body.run();
  }
}

async function startApp(
  provider: LockProvider,
): Promise<{ app: INestApplicationContext; events$: LockEvents['events$'] }> {
  const app = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '1m' })],
    providers: [ReportJob],
  }).compile();
  const { events$ } = app.get(LockEvents);
  return { app, events$ };
}

/**
 * The next `count` events of one run of the job, from its next attempt on: once the run has a fencing
 * token, events of later ticks (other tokens, or attempts) are left out.
 */
function sequence(events$: LockEvents['events$'], count: number): Promise<LockEvent[]> {
  let attempted = false;
  let token: number | null = null;
  return events(
    events$,
    (event) => {
      if (token === null) {
        attempted ||= event.type === 'attempt';
        token = event.fencingToken;
        return attempted;
      }
      return event.fencingToken === token;
    },
    count,
  );
}

/** On fake time, the job's interval too. */
beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe('lock events of a scheduled job', () => {
  let app: INestApplicationContext;
  const store = new TestLockProvider();

  afterEach(async () => {
    await app.close();
    store.reset();
  });

  /** Starts the app and resolves to the first `count` events of one run (or skip) of the job. */
  async function firstRun(count: number): Promise<LockEvent[]> {
    const started = await startApp(store.provider('node-a'));
    app = started.app;
    const run = sequence(started.events$, count);
    await app.init();
    return runClockUntil(run);
  }

  it('a run: attempt, acquired, started, finished, released, each naming lock, job and node', async () => {
    body.run = async () => undefined;
    const seen = await firstRun(5);
    expect(seen.map((event) => event.type)).toEqual(['attempt', 'acquired', 'started', 'finished', 'released']);
    for (const event of seen)
      expect(event).toMatchObject({ lockName: 'report', jobName: 'report-job', node: 'node-a' });
    const [, acquired, , finished] = seen;
    expect(acquired).toMatchObject({ fencingToken: expect.any(Number), lockedUntil: expect.any(Date) });
    expect(finished).toMatchObject({ durationMs: expect.any(Number) });
    expect(finished).not.toHaveProperty('error', expect.anything());
  });

  it('a failing run: finished carries the error, and the lock is still released', async () => {
    const failure = new Error('report failed');
    body.run = async () => {
      throw failure;
    };
    const seen = await firstRun(5);
    expect(seen.map((event) => event.type)).toEqual(['attempt', 'acquired', 'started', 'finished', 'released']);
    expect(seen[3]).toMatchObject({ error: failure });
  });

  it('a skip: attempt, then skipped with reason locked', async () => {
    await store.hold('report', { for: 10_000 });
    const seen = await firstRun(2);
    expect(seen.map((event) => event.type)).toEqual(['attempt', 'skipped']);
    expect(seen[1]).toMatchObject({ reason: 'locked', jobName: 'report-job' });
  });

  it('a loss: lost with its reason while the run goes on, then release-failed when it ends', async () => {
    body.run = async () => {
      // No later tick may take the freed lock before the renewal finds it gone: that would read as not-owner.
      app.get(SchedulerRegistry).deleteInterval('report-job');
      store.expire('report');
      const { signal } = currentLock()!;
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      body.run = async () => undefined;
    };
    const seen = await firstRun(6);
    expect(seen.map((event) => event.type)).toEqual([
      'attempt',
      'acquired',
      'started',
      'lost',
      'finished',
      'release-failed',
    ]);
    expect(seen[3]).toMatchObject({ reason: 'expired' });
    expect(seen[5]).toMatchObject({ reason: 'expired' });
  });
});

describe('release failure on a store error', () => {
  it('emits release-failed with reason provider-error when the store goes away during the run; the run itself completes', async () => {
    const outage = new OutageProvider(new TestLockProvider().provider('node-a'));
    let completed = false;
    body.run = async () => {
      outage.down = true;
      completed = true;
      body.run = async () => undefined;
    };
    const { app, events$ } = await startApp(outage);
    try {
      const run = sequence(events$, 5);
      await app.init();
      const seen = await runClockUntil(run);
      expect(seen.map((event) => event.type)).toEqual(['attempt', 'acquired', 'started', 'finished', 'release-failed']);
      expect(seen[4]).toMatchObject({ reason: 'provider-error', error: expect.any(Error) });
      expect(completed).toBe(true);
    } finally {
      await app.close();
    }
  });
});
