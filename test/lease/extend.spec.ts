import { jest } from '@jest/globals';
import { currentLock, LockLostError } from '../../lib/index.js';
import { memoryExecutorOnFakeTime, ttlOf } from '../support/memory-executor.js';
import { aborted } from '../support/memory-executor.js';

/**
 * `currentLock().extend(lockAtMostFor, lockAtLeastFor?)` moves the expiry to `lockAtMostFor` from now,
 * earlier or later than before. The README promises the run's signal aborts before the lock can expire
 * ("it knows its own deadline"), and `lockAtLeastFor` keeps the lock after a short run. On fake time.
 */
describe('extend()', () => {
  const node = memoryExecutorOnFakeTime();

  it('that shortens a lock aborts the signal before the new, earlier expiry, not at the old one', async () => {
    const SHORTENED = 300;
    const result = await node().executor.executeWithLock(
      async () => {
        const lock = currentLock()!;
        await lock.extend(SHORTENED);
        const extendedAt = performance.now();
        const abort = aborted(lock.signal).then((reason) => ({
          outcome: (reason as LockLostError).reason,
          afterMs: performance.now() - extendedAt,
        }));
        // Up to the new expiry, far before the old deadline (10 s).
        await jest.advanceTimersByTimeAsync(SHORTENED);
        return lock.signal.aborted ? abort : { outcome: 'not aborted by the new lockAtMostFor', afterMs: NaN };
      },
      { name: 'shortened', lockAtMostFor: '10s' },
    );

    expect(result).toMatchObject({ executed: true, result: { outcome: 'expired' } });
    expect(result.executed && result.result.afterMs).toBeLessThan(SHORTENED);
  });

  it("without lockAtLeastFor keeps the job's lockAtLeastFor: a short run still holds the lock until then", async () => {
    const AT_LEAST = 2_000;
    await node().executor.executeWithLock(() => currentLock()!.extend('1m'), {
      name: 'at-least',
      lockAtMostFor: '10s',
      lockAtLeastFor: AT_LEAST,
    });

    expect(await ttlOf(node(), 'at-least')).toBe(AT_LEAST); // the run took no time, so the minimum hold matters
    await jest.advanceTimersByTimeAsync(AT_LEAST);
    expect(await ttlOf(node(), 'at-least')).toBeUndefined();
  });
});
