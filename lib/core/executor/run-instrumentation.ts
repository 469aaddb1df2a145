import type { LockContext } from '../task/lock-context.js';
import type { LockEvents } from '../task/lock-events.js';
import type { LockProvider } from '../provider/lock-provider.js';
import { canRenewLeases, type LeaseRenewingLockProvider } from '../provider/provider-abilities.js';

/** A locked run as an instrumentation sees it: its lock, and the job it belongs to. */
export interface InstrumentedRun extends LockContext {
  /** The scheduler job's registry name; `null` for an `executeWithLock` task. */
  readonly jobName: string | null;
}

/**
 * Wraps each locked run of an executor (tracing: `nest-scheduler-lock/opentelemetry`). Without one, the
 * executor calls the task directly: nothing is allocated for it.
 */
export interface RunInstrumentation {
  /**
   * Called once, when the executor is built, with the node's lock events: what an instrumentation counts
   * (runs, skips, lost locks) it can take from them.
   */
  attach?(events: LockEvents): void;
  /**
   * Runs `task` (the handler, under its lock) and settles as it does. What `around` makes current while
   * calling `task` (a tracing context) is the handler's, down to its own async calls.
   */
  around<T>(run: InstrumentedRun, task: () => T | Promise<T>): Promise<T>;
  /** A lease renewal round trip ended: how many leases it carried, how long it took (ms), whether it failed. */
  renewalRoundTrip?(leases: number, durationMs: number, failed: boolean): void;
  /**
   * This node's health check (every `heartbeatInterval`) read each job's last success, cluster-wide: when the
   * newest successful run started, or `null` when none did.
   */
  healthChecked?(jobs: readonly { readonly jobName: string; readonly lastSuccess: Date | null }[]): void;
}

/** `provider`'s lease renewal, timed for `instrumentation` when it wants round trips; `undefined` without it. */
export function leaseRenewer(
  provider: LockProvider,
  instrumentation: RunInstrumentation | undefined,
): LeaseRenewingLockProvider | undefined {
  if (!canRenewLeases(provider)) return undefined;
  const observe = instrumentation?.renewalRoundTrip?.bind(instrumentation);
  if (!observe) return provider;
  return {
    lock: (configuration) => provider.lock(configuration),
    renewLeases: async (renewals) => {
      const sentAt = performance.now();
      try {
        const outcomes = await provider.renewLeases(renewals);
        observe(renewals.length, performance.now() - sentAt, false);
        return outcomes;
      } catch (error) {
        observe(renewals.length, performance.now() - sentAt, true);
        throw error;
      }
    },
  };
}
