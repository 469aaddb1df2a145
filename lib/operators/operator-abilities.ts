import type { LockConfiguration } from '../core/provider/lock-configuration.js';
import type { LockProvider, SimpleLock } from '../core/provider/lock-provider.js';
import type { OperatorProvider } from './operator-provider.js';

/*
 * What a provider offers the operator console, one interface per ability like lib/core's
 * provider-abilities.ts: the module looks for each with these guards, never by a provider's class.
 */

/** A provider whose store also keeps the operator console's records. */
export interface OperatorLockProvider extends LockProvider {
  /** The operator store beside this provider's locks, in the same store (one per provider). */
  operatorProvider(): OperatorProvider;
}

/**
 * Takes a scheduled job's lock for one run, refused while an operator has paused the job. Without this
 * ability a job's plain ticks use `lock()`, and pausing it is not possible.
 */
export interface JobLockProvider extends LockProvider {
  /** `manual`: a run an operator asked for, which runs even while the job is paused. */
  lockJob(configuration: LockConfiguration, manual: boolean): Promise<JobLockClaim>;
}

/** What {@link JobLockProvider.lockJob} got. */
export type JobLockClaim = { readonly lock: SimpleLock } | { readonly refused: 'locked' | 'paused' };

/** The operator abilities, by the method each one adds: checked at startup like lib/core's. */
export const OPERATOR_ABILITY_METHODS = ['operatorProvider', 'lockJob'] as const;

export function hasOperatorProvider(provider: LockProvider): provider is OperatorLockProvider {
  return typeof (provider as Partial<OperatorLockProvider>).operatorProvider === 'function';
}

export function canLockJobs(provider: LockProvider): provider is JobLockProvider {
  return typeof (provider as Partial<JobLockProvider>).lockJob === 'function';
}
