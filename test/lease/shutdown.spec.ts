import { Injectable, type INestApplicationContext } from '@nestjs/common';
import { Interval, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import {
  LockEvents,
  LockLostError,
  SchedulerLock,
  SchedulerLockModule,
  currentLock,
  type LockEvent,
} from '../../lib/index.js';
import { type Duration } from '../../lib/core/provider/duration.js';
import { nextEvent } from '../support/lock-events.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

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

describe('graceful shutdown on app.close()', () => {
  const shared = useSharedRedisPrefix('shutdown');
  let provider: RedisLockProvider;
  let app: INestApplicationContext;
  let seen: LockEvent[];

  async function start(shutdownTimeout: Duration): Promise<LockEvents> {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRoot({
          redis: shared.client,
          keyPrefix: shared.prefix,
          defaultLockAtMostFor: '1m',
          shutdownTimeout,
        }),
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
    provider = new RedisLockProvider(shared.client, { keyPrefix: shared.prefix });
  });

  it('releases the locks of runs that finished, and starts no run after close() began', async () => {
    body.run = async () => undefined;
    const events = await start('5s');
    await nextEvent(events.events$, (event) => event.type === 'released' && event.lockName === 'long');
    const closeCalledAt = seen.length;
    await app.close();
    await new Promise((resolve) => setTimeout(resolve, 100));

    expect(seen.slice(closeCalledAt).filter((event) => event.type === 'started')).toEqual([]);
    expect(await shared.client.exists(provider.lockKey('long'), provider.lockKey('short'))).toBe(0);
    expect(shared.client.status).toBe('ready'); // the app's own client is not closed
  });

  it('waits for a run that finishes within shutdownTimeout, then releases its lock', async () => {
    let finished = false;
    body.run = async () => {
      await new Promise((resolve) => setTimeout(resolve, 400));
      finished = currentLock()!.signal.aborted === false;
    };
    const events = await start('5s');
    await nextEvent(events.events$, (event) => event.type === 'started' && event.lockName === 'long');
    body.run = async () => undefined;
    const closing = performance.now();
    await app.close();

    expect(performance.now() - closing).toBeGreaterThan(300);
    expect(finished).toBe(true);
    expect(seen).toContainEqual(expect.objectContaining({ type: 'released', lockName: 'long' }));
    expect(seen.filter((event) => event.type === 'started' && event.lockName === 'long')).toHaveLength(1);
    expect(await shared.client.exists(provider.lockKey('long'))).toBe(0);
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
    await nextEvent(events.events$, (event) => event.type === 'started' && event.lockName === 'long');
    const closeCalledAt = seen.length;
    const closing = performance.now();
    await app.close();
    const tookMs = performance.now() - closing;

    // The short job's timer kept firing for ~20 ms after close() began; none of those ticks started a run.
    expect(seen.slice(closeCalledAt).filter((event) => event.type === 'started')).toEqual([]);
    expect(abortReason).toBeInstanceOf(LockLostError);
    expect((abortReason as LockLostError).reason).toBe('shutdown');
    expect(seen).toContainEqual(expect.objectContaining({ type: 'lost', lockName: 'long', reason: 'shutdown' }));
    expect(tookMs).toBeGreaterThan(150);
    expect(tookMs).toBeLessThan(3_000); // timeout + the 1 s grace, not the job's length
    expect(await shared.client.exists(provider.lockKey('long'))).toBe(1);
    const ttl = await shared.client.pttl(provider.lockKey('long'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(10_000); // expires on its lease, not renewed any more
    release();
  });
});
