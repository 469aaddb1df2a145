import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { GatedLockProvider } from '../support/gated-lock-provider.js';
import { memoryExecutor } from '../support/memory-executor.js';

/**
 * Graceful shutdown (README): "no new run starts". A lock attempt that is still waiting for the store when
 * shutdown begins is not in the set of runs shutdown waits for; once shutdown has returned (and the
 * module has closed its store client, stopped the lease keeper), its task must not start.
 */
describe('shutdown while a lock attempt is waiting for the store', () => {
  it('does not start the task after shutdown() has returned, and leaves no lock behind', async () => {
    let gated!: GatedLockProvider;
    const node = memoryExecutor((provider) => (gated = new GatedLockProvider(provider)));
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
    expect(await isLocked(node.store.provider('node-b'), 'pending')).toBe(false);
  });
});
