import type { SchedulerLockLogger } from './logger.js';

/** Keys remembered at most: per-item lock names (one per customer, say) must not grow it without bound. */
const MAX_KEYS = 1_000;

/**
 * Logs a recurring fault once per `intervalMs` per key, then how many were held back, so a Redis
 * outage gives a line every half minute per job instead of one per tick.
 */
export class FaultLog {
  private readonly last = new Map<string, { at: number; suppressed: number }>();

  constructor(
    private readonly logger: SchedulerLockLogger,
    private readonly intervalMs = 30_000,
  ) {}

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
