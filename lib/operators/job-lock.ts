import type { AcquiredLock, LockAcquisition, SkippedRun } from '../core/executor/lock-acquisition.js';
import type { LockConfiguration } from '../core/provider/lock-configuration.js';
import { awaitProviderCall, describeProvider, usableLock } from '../core/provider/provider-checks.js';
import type { JobLockProvider } from './operator-abilities.js';

/**
 * Takes a scheduled job's lock for one run through {@link JobLockProvider.lockJob}: a tick is skipped as
 * `paused` while an operator has paused the job; a run an operator asked for (`manual`) runs anyway.
 */
export class JobLock implements LockAcquisition {
  /** The provider's class, for a message about a lock it broke: named once, not on every tick. */
  private readonly providerName: string;

  constructor(
    private readonly provider: JobLockProvider,
    private readonly manual?: { readonly actor: string; readonly triggerId: string },
  ) {
    this.providerName = describeProvider(provider);
  }

  async acquire(configuration: LockConfiguration): Promise<AcquiredLock | SkippedRun> {
    const name = this.providerName;
    const claim = await awaitProviderCall(
      this.provider.lockJob(configuration, this.manual !== undefined),
      name,
      'lockJob()',
    );
    if ('refused' in claim) return { executed: false, reason: claim.refused };
    const lock = usableLock(claim.lock, name, 'lockJob()');
    if (!lock) return { executed: false, reason: 'locked' };
    return { lock, run: this.manual && { manual: this.manual } };
  }
}
