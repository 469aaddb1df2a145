import { currentLock } from '../../lib/index.js';
import { redisExecutor, type RedisExecutorFixture } from '../support/redis-executor.js';

/**
 * `lockAtLeastFor` (README): "On release, the lock is kept until this long after it was taken, so that a
 * node whose clock or timer is a little behind does not run the same tick again." `extend(lockAtMostFor,
 * lockAtLeastFor?)` makes the second argument optional; leaving it out must not cancel the job's own
 * `lockAtLeastFor`.
 */
describe('extend() without lockAtLeastFor', () => {
  const AT_LEAST = 2_000;
  let node: RedisExecutorFixture;

  beforeEach(() => {
    node = redisExecutor('review-extend-at-least');
  });

  afterEach(() => node.dispose());

  it("keeps the job's lockAtLeastFor: a short run still holds the lock until then", async () => {
    const takenAt = performance.now();
    await node.executor.executeWithLock(() => currentLock()!.extend('1m'), { name: 'at-least', lockAtMostFor: '10s', lockAtLeastFor: AT_LEAST });
    const releasedAfter = performance.now() - takenAt;
    const ttl = await node.client.pttl(node.provider.lockKey('at-least'));

    expect(releasedAfter).toBeLessThan(AT_LEAST / 2); // the run was short, so the minimum hold matters
    expect(ttl).toBeGreaterThan(AT_LEAST / 2); // -2: the key was deleted on release
  });
});
