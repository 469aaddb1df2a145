import { currentLock, LockLostError } from '../../lib/index.js';
import { aborted, useRedisExecutor } from '../support/redis-executor.js';

/**
 * `currentLock().extend(lockAtMostFor, lockAtLeastFor?)` moves the expiry to `lockAtMostFor` from now,
 * earlier or later than before. The README promises the run's signal aborts before the lock can expire
 * ("it knows its own deadline"), and `lockAtLeastFor` keeps the lock after a short run.
 */
describe('extend()', () => {
  const node = useRedisExecutor('extend');

  it('that shortens a lock aborts the signal before the new, earlier expiry, not at the old one', async () => {
    const SHORTENED = 300;
    const result = await node.executor.executeWithLock(
      async () => {
        const lock = currentLock()!;
        await lock.extend(SHORTENED);
        const extendedAt = performance.now();
        // Waits well past the new expiry, and well before the old deadline (10 s).
        const outcome = await Promise.race([
          aborted(lock.signal).then((reason) => (reason as LockLostError).reason),
          new Promise<string>((resolve) =>
            setTimeout(resolve, 3 * SHORTENED, 'not aborted after 3 x the new lockAtMostFor'),
          ),
        ]);
        return { outcome, afterMs: performance.now() - extendedAt };
      },
      { name: 'shortened', lockAtMostFor: '10s' },
    );

    expect(result).toMatchObject({ executed: true, result: { outcome: 'expired' } });
    expect(result.executed && result.result.afterMs).toBeLessThan(SHORTENED);
  });

  it("without lockAtLeastFor keeps the job's lockAtLeastFor: a short run still holds the lock until then", async () => {
    const AT_LEAST = 2_000;
    const takenAt = performance.now();
    await node.executor.executeWithLock(() => currentLock()!.extend('1m'), {
      name: 'at-least',
      lockAtMostFor: '10s',
      lockAtLeastFor: AT_LEAST,
    });
    const releasedAfter = performance.now() - takenAt;
    const ttl = await node.client.pttl(node.provider.lockKey('at-least'));

    expect(releasedAfter).toBeLessThan(AT_LEAST / 2); // the run was short, so the minimum hold matters
    expect(ttl).toBeGreaterThan(AT_LEAST / 2); // -2: the key was deleted on release
  });
});
