import { currentLock, type LockEvent } from '../../lib/index.js';
import { useRedisExecutor } from '../support/redis-executor.js';

/**
 * With `keepAlive: true` (30 s lease, for instance set module-wide) a job whose `lockAtMostFor` is below
 * the lease is taken for `lockAtMostFor`. Its signal must abort shortly before that cap ("just before",
 * README), not when the run starts.
 */
describe('keepAlive with a lease longer than lockAtMostFor', () => {
  const node = useRedisExecutor('short-cap');

  it('does not report a healthy lock as lost at the start of its run', async () => {
    const lost: LockEvent[] = [];
    const subscription = node.events.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    const result = await node.executor.executeWithLock(
      async () => {
        // Long enough for the lease keeper's first wake-up, far from the 800 ms cap.
        await new Promise((resolve) => setTimeout(resolve, 100));
        const held = (await node.client.get(node.provider.lockKey('short-cap'))) !== null;
        return { aborted: currentLock()!.signal.aborted, held };
      },
      { name: 'short-cap', lockAtMostFor: 800, keepAlive: true },
    );
    subscription.unsubscribe();

    expect(result).toEqual({ executed: true, result: { aborted: false, held: true } });
    expect(lost).toEqual([]);
  });
});
