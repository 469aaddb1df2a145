import type { FaultLog } from './fault-log.js';
import type { SchedulerLockLogger } from './logger.js';
import type { SimpleLock } from '../provider/lock-provider.js';
import { describeError } from '../provider/message-text.js';

/** Why a lock that arrived goes unused: its attempt had timed out, or the app began shutting down meanwhile. */
export type UnusedReason = 'timed-out' | 'shutdown';

/** How many lock names a line quotes; the rest are counted. */
const NAMES_SHOWN = 3;

const ARRIVED_AFTER: Record<UnusedReason, { one: string; many: string }> = {
  'timed-out': { one: 'its attempt timed out', many: 'their attempts timed out' },
  shutdown: { one: 'the app began shutting down', many: 'the app began shutting down' },
};

/**
 * Releases locks that must not be used. A late answer to a burst brings a thousand claims at once, so the
 * locks that arrive in one turn of the event loop get one warning, and one error if their release fails.
 */
export class UnusedLocks {
  private arrived = new Map<UnusedReason, string[]>();
  private failed: { names: string[]; error: unknown } | undefined;

  constructor(
    private readonly logger: SchedulerLockLogger,
    private readonly faults: FaultLog,
  ) {}

  /** Releases `lock` (of lock `name`) unused; an occurrence's record keeps saying running, as after a crash. */
  release(name: string, lock: SimpleLock, reason: UnusedReason): void {
    if (this.arrived.size === 0) setImmediate(() => this.report());
    const names = this.arrived.get(reason) ?? [];
    names.push(name);
    this.arrived.set(reason, names);
    lock.unlock().catch((error: unknown) => this.releaseFailed(name, error));
  }

  private report(): void {
    for (const [reason, names] of this.arrived) {
      const after = ARRIVED_AFTER[reason];
      this.logger.warn(
        names.length === 1
          ? `Lock "${names[0]}" arrived after ${after.one}; releasing it unused`
          : `${names.length} locks arrived after ${after.many} (${quoted(names)}); releasing them unused`,
      );
    }
    this.arrived = new Map();
  }

  private releaseFailed(name: string, error: unknown): void {
    if (this.failed) return void this.failed.names.push(name);
    this.failed = { names: [name], error };
    setImmediate(() => {
      const { names } = this.failed!;
      this.failed = undefined;
      const locks =
        names.length === 1
          ? `the late lock "${name}"; it expires on its own`
          : `${names.length} late locks (${quoted(names)}); they expire on their own`;
      this.faults.error(name, `Could not release ${locks}: ${describeError(error)}`);
    });
  }
}

/** `"a", "b", "c" and 997 more`. */
function quoted(names: readonly string[]): string {
  const shown = names.slice(0, NAMES_SHOWN).map((name) => `"${name}"`);
  const more = names.length - shown.length;
  return more > 0 ? `${shown.join(', ')} and ${more} more` : shown.join(', ');
}
