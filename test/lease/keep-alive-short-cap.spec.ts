import { jest } from '@jest/globals';
import { currentLock, InMemoryLockProvider, LockEvents, LockingTaskExecutor, type LockEvent } from '../../lib/index.js';

/**
 * With `keepAlive: true` (30 s lease, for instance set module-wide) a job whose `lockAtMostFor` is below
 * the lease is taken for `lockAtMostFor`. Its signal must abort shortly before that cap ("just before",
 * README), not when the run starts. On fake time: the lease keeper's timers, not a store, are the subject.
 */
describe('keepAlive with a lease longer than lockAtMostFor', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('does not report a healthy lock as lost at the start of its run', async () => {
    const provider = new InMemoryLockProvider();
    const events = new LockEvents();
    const executor = new LockingTaskExecutor(provider, { node: 'node-a', events });
    const lost: LockEvent[] = [];
    const subscription = events.events$.subscribe((event) => event.type === 'lost' && lost.push(event));
    const result = await executor.executeWithLock(
      async () => {
        // Past the lease keeper's first wake-up, far from the 800 ms cap.
        await jest.advanceTimersByTimeAsync(100);
        const held = (await provider.operatorProvider().lockState('short-cap')).holder !== null;
        return { aborted: currentLock()!.signal.aborted, held };
      },
      { name: 'short-cap', lockAtMostFor: 800, keepAlive: true },
    );
    subscription.unsubscribe();

    expect(result).toEqual({ executed: true, result: { aborted: false, held: true } });
    expect(lost).toEqual([]);
    await executor.shutdown(0);
  });
});
