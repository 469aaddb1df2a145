/**
 * Reports an outage of the lock store once, instead of a line per lock and per 30 s: the executor hands
 * it every failed lock attempt and every answered one (see `RedisOutageReport`).
 */
export interface StoreOutageReport {
  /**
   * A lock attempt failed with `error`. `true` when the failure belongs to an outage this report
   * covers, so the executor logs no line of its own for it.
   */
  covers(error: unknown): boolean;
  /** A lock attempt got the store's answer. */
  answered(): void;
}
