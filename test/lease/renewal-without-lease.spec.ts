import { LockEvents, LockingTaskExecutor, type LockEvent } from '../../lib/index.js';
import { nextEvent } from '../support/lock-events.js';
import { recordCommands, type CommandRecorder } from '../support/redis-monitor.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const LEASE = 300;

/**
 * Only `keepAlive` locks have a lease. The lease keeper still tracks the other running locks (to abort
 * their signal before `lockAtMostFor`), and must never send them to `renewLeases`: they have no TTL to
 * renew with, and Redis answers `ERR value is not an integer` for the NaN.
 */
describe('the lease keeper with only non-keepAlive locks held', () => {
  const redis = usePrivateRedisServer();
  let recorder: CommandRecorder;
  let events: LockEvents;
  let executor: LockingTaskExecutor;

  beforeEach(async () => {
    recorder = await recordCommands(redis.admin);
    events = new LockEvents();
    executor = new LockingTaskExecutor(new RedisLockProvider(redis.admin, { node: 'node-a' }), {
      node: 'node-a',
      events,
    });
  });

  afterEach(async () => {
    await executor.shutdown(0);
    await recorder.close();
  });

  it("sends no command while a plain lock runs past a released keepAlive lock's renewal time", async () => {
    // The keepAlive run ends before its first renewal is due, leaving the keeper's wake-up set for it.
    await executor.executeWithLock(() => undefined, {
      name: 'leased',
      lockAtMostFor: '1m',
      keepAlive: { lease: LEASE },
    });
    const plainLost = nextEvent(
      events.events$,
      (event: LockEvent) => event.type === 'lost' && event.lockName === 'plain',
    );
    let endPlainRun!: () => void;
    // Held until the keeper has aborted it shortly before its lockAtMostFor, and the commands are counted.
    const plainRun = executor.executeWithLock(() => new Promise<void>((resolve) => (endPlainRun = resolve)), {
      name: 'plain',
      lockAtMostFor: 3 * LEASE,
    });
    await recorder.take(); // the commands of the keepAlive run and of the plain acquire

    const lost = await plainLost;
    const sentWhileHeld = await recorder.take();
    endPlainRun();
    await plainRun;

    expect(lost).toMatchObject({ type: 'lost', reason: 'expired' });
    expect(sentWhileHeld).toEqual([]);
  });
});
