import { GatedLockProvider } from '../support/gated-lock-provider.js';
import { useRedisExecutor } from '../support/redis-executor.js';

/**
 * Graceful shutdown (README): "no new run starts". A lock attempt that is still waiting for Redis when
 * shutdown begins is not in the set of runs shutdown waits for; once shutdown has returned (and the
 * module has closed its Redis client, stopped the lease keeper), its task must not start.
 */
describe('shutdown while a lock attempt is waiting for the store', () => {
  let gated: GatedLockProvider;
  const node = useRedisExecutor('shutdown', (provider) => (gated = new GatedLockProvider(provider)));

  it('does not start the task after shutdown() has returned, and leaves no lock behind', async () => {
    let startedAfterShutdown = false;
    let shutdownDone = false;
    const run = node.executor.executeWithLock(
      () => {
        startedAfterShutdown = shutdownDone;
      },
      { name: 'pending', lockAtMostFor: '10s' },
    );
    await gated.requested;

    await node.executor.shutdown(1_000);
    shutdownDone = true;
    gated.open();

    expect(await run).toEqual({ executed: false, reason: 'shutdown' });
    expect(startedAfterShutdown).toBe(false);
    expect(await node.client.exists(node.provider.lockKey('pending'))).toBe(0);
  });
});
