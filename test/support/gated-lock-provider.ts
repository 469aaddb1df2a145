import type { LockConfiguration, LockProvider, SimpleLock } from '../../lib/provider/index.js';
import { deferred } from './wait-until.js';

/**
 * Wraps a provider so that every `lock()` waits until the test calls {@link open}, as a slow store
 * round trip does; `requested` settles once the first `lock()` call is waiting.
 */
export class GatedLockProvider implements LockProvider {
  private readonly gate = deferred();
  private readonly firstRequest = deferred();

  constructor(private readonly inner: LockProvider) {}

  /** Settles once a `lock()` call is waiting at the gate. */
  get requested(): Promise<void> {
    return this.firstRequest.promise;
  }

  /** Lets every waiting and later `lock()` call through to the inner provider. */
  open(): void {
    this.gate.resolve();
  }

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    this.firstRequest.resolve();
    await this.gate.promise;
    return this.inner.lock(configuration);
  }
}
