/**
 * Reports an outage of the lock store once, instead of a line per lock and per 30 s: every user of the
 * store on the node (lock attempts, lease renewals, the cluster view's heartbeats and trigger polls) hands
 * it each failed call and each answered one (see `RedisOutageReport`).
 */
export interface StoreOutageReport {
  /**
   * A call to the store failed with `error`. `true` when the failure belongs to an outage this report
   * covers, so the caller logs no line of its own for it.
   */
  covers(error: unknown): boolean;
  /** A call to the store got its answer. */
  answered(): void;
}
