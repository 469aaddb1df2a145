import { burstDeadline } from '../provider/burst-deadline.js';
import { formatDuration } from '../provider/duration.js';
import { LockProviderUnavailableError } from '../provider/errors.js';

interface PendingAttempt {
  readonly startedAt: number;
  /** The most attempts seen in flight with this one: its burst. */
  burst: number;
  /** The longest its burst may make its deadline (ms); never shorter than the timeout. */
  readonly growUpTo: number;
  readonly expire: (timeoutMs: number) => void;
  settled: boolean;
}

/**
 * Times out lock attempts with one shared timer instead of one per attempt: an attempt that has not
 * answered by its deadline is failed at the next sweep (at most a quarter of the timeout late). The
 * deadline is the timeout, grown for an attempt in flight with many others (a burst, whose claims the store
 * answers together; see `burstDeadline`), up to the attempt's own bound. The timer runs only while attempts
 * are pending and never keeps the process alive.
 */
export class AttemptDeadlines {
  private readonly pending = new Set<PendingAttempt>();
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly timeoutMs: number) {}

  /**
   * Settles like `attempt`, or rejects once its deadline has passed; a value that arrives after that
   * goes to `late` (for example a lock to release unused). Its burst grows the deadline up to `growUpTo` ms.
   */
  within<T>(attempt: Promise<T>, late: (value: T) => void, growUpTo = Infinity): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: PendingAttempt = {
        startedAt: performance.now(),
        burst: 1,
        growUpTo,
        expire: (timeoutMs) => reject(this.timedOut(timeoutMs)),
        settled: false,
      };
      this.pending.add(entry);
      this.timer ??= setInterval(() => this.sweep(), Math.max(10, this.timeoutMs / 4)).unref();
      attempt.then(
        (value) => (this.settle(entry) ? resolve(value) : late(value)),
        (error: unknown) => this.settle(entry) && reject(error),
      );
    });
  }

  private timedOut(timeoutMs: number): LockProviderUnavailableError {
    return new LockProviderUnavailableError(
      `the lock store did not answer within ${timeoutMs} ms`,
      `no answer within ${formatDuration(timeoutMs)}`,
      { unanswered: true },
    );
  }

  /** Marks an attempt answered; `false` if it had already timed out. */
  private settle(entry: PendingAttempt): boolean {
    if (entry.settled) return false;
    entry.settled = true;
    this.pending.delete(entry);
    return true;
  }

  private sweep(): void {
    const now = performance.now();
    const inFlight = this.pending.size;
    const timeoutOf = (entry: PendingAttempt) =>
      Math.max(this.timeoutMs, Math.min(burstDeadline(this.timeoutMs, entry.burst), entry.growUpTo));
    const overdue = [...this.pending].filter((entry) => {
      entry.burst = Math.max(entry.burst, inFlight);
      return now >= entry.startedAt + timeoutOf(entry);
    });
    // Timers run before Node reads its sockets: after the event loop was blocked past a deadline, the
    // answer may be waiting unread. It is read before setImmediate's callback runs, so only an attempt
    // Redis really left unanswered times out, not one the node was too busy to look at.
    if (overdue.length > 0)
      setImmediate(() => overdue.forEach((entry) => this.settle(entry) && entry.expire(timeoutOf(entry))));
    if (this.pending.size === overdue.length) {
      clearInterval(this.timer);
      this.timer = undefined;
    }
  }
}
