import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { GatedLockProvider } from '../support/gated-lock-provider.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { memoryExecutor } from '../support/memory-executor.js';

/**
 * Graceful shutdown (README): "no new run starts". A lock attempt that is still waiting for the store when
 * shutdown begins is not in the set of runs shutdown waits for; once shutdown has returned (and the
 * module has closed its store client, stopped the lease keeper), its task must not start.
 */
describe('shutdown while a lock attempt is waiting for the store', () => {
  it('does not start the task after shutdown() has returned, and leaves no lock behind', async () => {
    let gated!: GatedLockProvider;
    const logger = new CapturedLogger();
    const node = memoryExecutor((provider) => (gated = new GatedLockProvider(provider)), logger);
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
    // The late lock's one warning comes a turn later, for all that arrive together: the test ends after it.
    await logger.nextText('warn', /^Lock "pending" arrived after the app began shutting down; releasing it unused$/);
    expect(logger.texts('warn')).toHaveLength(1);
  });
});
