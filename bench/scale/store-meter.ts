/** What the store's server did over a window, as far as the meter can tell. */
export interface StoreUsage {
  /** CPU time of the server's processes, µs (Redis: `INFO cpu`; PostgreSQL: its processes in /proc). */
  readonly cpuMicros?: number;
  /**
   * Commands Redis executed (`INFO commandstats`), those run inside scripts included, the meter's INFO not;
   * statements PostgreSQL executed (`pg_stat_statements` calls), the meter's own not.
   */
  readonly commandsExecuted?: number;
  /**
   * Time the server spent executing them, µs: Redis's script calls (`EVALSHA`, `EVAL`; their commands'
   * time included, that of commands sent outside scripts not), PostgreSQL's statements (`total_exec_time`).
   */
  readonly executionMicros?: number;
  /** Instructions the server executed (callgrind). */
  readonly instructions?: number;
}

/** Reads what a store server did between two moments. */
export interface StoreMeter {
  begin(): Promise<void>;
  /** What the server did since {@link begin}. */
  end(): Promise<StoreUsage>;
}
