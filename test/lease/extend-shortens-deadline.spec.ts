import { currentLock, LockLostError } from '../../lib/index.js';
import { aborted, redisExecutor, type RedisExecutorFixture } from '../support/redis-executor.js';

/**
 * `extend(lockAtMostFor)` moves the expiry to `lockAtMostFor` from now, which may be *earlier* than the
 * expiry the lock had. The README promises that the run's signal aborts before the lock can expire,
 * "as far as the node can know (it knows its own deadline)".
 */
describe('extend() that shortens a lock', () => {
  const SHORTENED = 300;
  let node: RedisExecutorFixture;

  beforeEach(() => {
    node = redisExecutor('review-extend');
  });

  afterEach(() => node.dispose());

  it('aborts the signal before the new, earlier expiry, not at the old one', async () => {
    const result = await node.executor.executeWithLock(
      async () => {
        const lock = currentLock()!;
        await lock.extend(SHORTENED);
        const extendedAt = performance.now();
        // Waits well past the new expiry, and well before the old deadline (10 s).
        const outcome = await Promise.race([
          aborted(lock.signal).then((reason) => (reason as LockLostError).reason),
          new Promise<string>((resolve) => setTimeout(resolve, 3 * SHORTENED, 'not aborted after 3 x the new lockAtMostFor')),
        ]);
        return { outcome, afterMs: performance.now() - extendedAt };
      },
      { name: 'shortened', lockAtMostFor: '10s' },
    );

    expect(result).toMatchObject({ executed: true, result: { outcome: 'expired' } });
    expect(result.executed && result.result.afterMs).toBeLessThan(SHORTENED);
  });
});
