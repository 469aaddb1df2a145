import type { SchedulerLockLogger } from './logger.js';
import type { ProviderOutageReport } from '../provider/store-outage-report.js';

/** Keys remembered at most: per-item lock names (one per customer, say) must not grow it without bound. */
const MAX_KEYS = 1_000;

/**
 * Logs a recurring fault once per `intervalMs` per key, then how many were held back, so a fault that
 * repeats gives a line every half minute per job instead of one per tick. A store call's failure that
 * belongs to an outage is the outage report's to log, once for the whole node.
 */
export class FaultLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: SchedulerLockLogger,
    private readonly outages?: ProviderOutageReport,
    private readonly intervalMs = 30_000,
  ) {}

  /**
   * A call to the store for `key` failed with `error`: logged as {@link error} unless an outage covers it.
   * Returns whether an outage covers it (its line tells the failure, so nothing else was logged). `sentAt`,
   * when the call was sent (`performance.now()`): a call sent during an outage may fail after it, and is its.
   */
  storeFailed(key: string, message: string, error: unknown, sentAt: number): boolean {
    const covered = this.outages?.failed(error, sentAt) ?? false;
    if (!covered) this.error(key, message);
    return covered;
  }

  /** The store answered a call for `key`: an outage is over, and the key's next fault is news. */
  storeAnswered(key: string): void {
    this.outages?.answered();
    this.clear(key);
  }

  error(key: string, message: string): void {
    const now = performance.now();
    const entry = this.last.get(key);
    if (entry && now - entry.at < this.intervalMs) {
      entry.suppressed += 1;
      return;
    }
    const held = entry?.suppressed ? ` (${entry.suppressed} more since the last report)` : '';
    if (!entry && this.last.size >= MAX_KEYS) this.last.delete(this.last.keys().next().value!);
    this.last.set(key, { at: now, suppressed: 0 });
    this.logger.error(`${message}${held}`);
  }

  /** Forgets a key once the fault is over, so the next fault is reported at once. */
  clear(key: string): void {
    this.last.delete(key);
  }
}
