/**
 * Reports an outage of the lock store once, instead of a line per lock and per 30 s: every user of the
 * store on the node (lock attempts, lease renewals, the cluster view's heartbeats and trigger polls) hands
 * it each failed call and each answered one (see `RedisOutageReport`).
 */
export interface ProviderOutageReport {
  /**
   * A call to the store failed with `error`. `true` when the failure belongs to an outage this report
   * covers, so the caller logs no line of its own for it. `sentAt` (`performance.now()` when the call was
   * sent; the module passes it for every call): a call sent before the store was last back belongs to the
   * outage that ended, and does not begin another.
   */
  failed(error: unknown, sentAt?: number): boolean;
  /** A call to the store got its answer. */
  answered(): void;
}

/** A {@link ProviderOutageReport} the module runs from the app's start to its shutdown. */
export interface ProviderOutageMonitor extends ProviderOutageReport {
  /** The app has started: an outage already under way is reported now, with the number of locked jobs. */
  start(lockedJobs: () => number): void;
  /** Stops watching the store (the app shuts down). */
  close(): void;
}

/** Where an outage report writes its lines: the module's logger (the executor's `SchedulerLockLogger` fits). */
export interface OutageLog {
  log(message: string): void;
  warn(message: string): void;
  error(message: string): void;
}

/** Makes the outage report of a provider's store, for the module (see `OutageReportingLockProvider`). */
export interface OutageReporter {
  reportOutages(logger: OutageLog): ProviderOutageMonitor;
}
