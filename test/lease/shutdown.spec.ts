import { jest } from '@jest/globals';
import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import {
  InMemoryLockProvider,
  LockEvents,
  LockLostError,
  SchedulerLock,
  SchedulerLockModule,
  currentLock,
  type LockEvent,
} from '../../lib/index.js';
import { type Duration } from '../../lib/core/provider/duration.js';
import { nextEvent } from '../support/lock-events.js';
import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { runClockUntil } from '../support/fake-clock.js';

/** How the long job behaves, set by each test before the app starts. */
const body: { run: () => Promise<void> } = { run: async () => undefined };

@Injectable()
class LongJob {
  @SchedulerLock({ name: 'long', lockAtMostFor: '1m', keepAlive: { lease: '10s' } })
  @Interval(50)
  async run(): Promise<void> {
    await body.run();
  }
}

@Injectable()
class ShortJob {
  @SchedulerLock({ name: 'short' })
  @Interval(20)
  tick(): void {}
}

/** On fake time, the jobs' intervals too: the executor's shutdown, not a store, is the subject. */
describe('graceful shutdown on app.close()', () => {
  let provider: InMemoryLockProvider;
  let app: INestApplicationContext;
  let seen: LockEvent[];

  async function start(shutdownTimeout: Duration): Promise<LockEvents> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRoot({ provider, defaultLockAtMostFor: '1m', shutdownTimeout }),
      ],
      providers: [LongJob, ShortJob],
    }).compile();
    app = moduleRef;
    const events = app.get(LockEvents);
    seen = [];
    events.events$.subscribe((event) => seen.push(event));
    await app.init();
    return events;
  }

  beforeEach(() => {
    jest.useFakeTimers();
    provider = new InMemoryLockProvider();
  });

  afterEach(async () => {
    await app.close();
    jest.useRealTimers();
  });

  /** Closes the app, the fake clock running meanwhile; resolves to how long it took on that clock. */
  async function close(): Promise<number> {
    const closing = performance.now();
    await runClockUntil(app.close());
    return performance.now() - closing;
  }

  it('releases the locks of runs that finished, and starts no run after close() began', async () => {
    body.run = async () => undefined;
    const events = await start('5s');
    const released = nextEvent(events.events$, (event) => event.type === 'released' && event.lockName === 'long');
    await jest.advanceTimersByTimeAsync(50);
    await released;
    const closeCalledAt = seen.length;
    await close();
    await jest.advanceTimersByTimeAsync(100);

    expect(seen.slice(closeCalledAt).filter((event) => event.type === 'started')).toEqual([]);
    expect(await isLocked(provider, 'long')).toBe(false);
    expect(await isLocked(provider, 'short')).toBe(false);
  });

  it('waits for a run that finishes within shutdownTimeout, then releases its lock', async () => {
    let finished = false;
    body.run = async () => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      finished = currentLock()!.signal.aborted === false;
    };
    const events = await start('5s');
    const started = nextEvent(events.events$, (event) => event.type === 'started' && event.lockName === 'long');
    await jest.advanceTimersByTimeAsync(50);
    await started;
    body.run = async () => undefined;

    expect(await close()).toBeGreaterThan(300);
    expect(finished).toBe(true);
    expect(seen).toContainEqual(expect.objectContaining({ type: 'released', lockName: 'long' }));
    expect(seen.filter((event) => event.type === 'started' && event.lockName === 'long')).toHaveLength(1);
    expect(await isLocked(provider, 'long')).toBe(false);
  });

  it('aborts a run still going at shutdownTimeout with reason shutdown, and leaves its lock to expire', async () => {
    let abortReason: unknown;
    let release!: () => void;
    const stillRunning = new Promise<void>((resolve) => (release = resolve));
    body.run = async () => {
      const { signal } = currentLock()!;
      signal.addEventListener('abort', () => (abortReason = signal.reason), { once: true });
      await stillRunning; // ignores the signal: the run outlives the grace period
    };
    const events = await start('200ms');
    const started = nextEvent(events.events$, (event) => event.type === 'started' && event.lockName === 'long');
    await jest.advanceTimersByTimeAsync(50);
    await started;
    const closeCalledAt = seen.length;
    const tookMs = await close();

    // The short job's timer kept firing for ~20 ms after close() began; none of those ticks started a run.
    expect(seen.slice(closeCalledAt).filter((event) => event.type === 'started')).toEqual([]);
    expect(abortReason).toBeInstanceOf(LockLostError);
    expect((abortReason as LockLostError).reason).toBe('shutdown');
    expect(seen).toContainEqual(expect.objectContaining({ type: 'lost', lockName: 'long', reason: 'shutdown' }));
    expect(tookMs).toBeGreaterThan(150);
    expect(tookMs).toBeLessThan(3_000); // timeout + the 1 s grace, not the job's length
    const ttl = (await provider.operatorProvider().lockState('long')).holder?.ttl;
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000); // expires on its lease, not renewed any more
    release();
  });
});
