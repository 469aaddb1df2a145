import { describeOutage } from './duration.js';
import type { OutageLog } from './store-outage-report.js';

/**
 * A store that has failed every call for this long is out, whatever the calls said (no answer in time, no
 * connection): longer than one call's default deadline (`acquireTimeout`, 2 s), so one slow answer is not.
 */
export const OUTAGE_MS = 3_000;

/**
 * The lines one store's outages give on a node, whatever the store: one error line once the store is known
 * to be unreachable — its name and endpoint, the cause, that locked ticks are skipped and how many locked jobs
 * the app has — and one line when it is back, with how long it was out. A store's `ProviderOutageMonitor` says
 * when an outage begins, why and when it ends; this keeps the count and writes the lines.
 *
 * The rule: an outage gets its error line as soon as its cause is known (the store refused or dropped the
 * connection, or answered that it cannot serve), or a call fails {@link OUTAGE_MS} or more after the outage
 * began (its first failed call's send, or the connection's loss) with no answer since, or a call sent after
 * an earlier unanswered call was seen failing goes unanswered too. Any shorter outage gives one warning once
 * the store answers, with the number of calls that failed.
 */
export class OutageLines {
  /** When the outage began (`performance.now()`), while there is one. */
  private downSince: number | undefined;
  /** Why the store is unreachable, once known: the first cause given wins. */
  private cause: string | undefined;
  private reported = false;
  /**
   * When a call was first seen going unanswered on a connection that looked fine (`performance.now()`), while
   * no other call has confirmed it: one slow answer is no outage yet.
   */
  private silenceSeenAt: number | undefined;
  /** When the store was last back after an outage (`performance.now()`). */
  private backAt = -Infinity;
  /** Calls to the store that failed during the outage. */
  private failedCalls = 0;
  /** The number of locked jobs, once the app has started: a line waits for it. */
  private lockedJobs: (() => number) | undefined;

  /** `store` names the store and where it is, e.g. `Redis 127.0.0.1:6379`. */
  constructor(
    private readonly store: string,
    private readonly logger: OutageLog,
  ) {}

  /** The app has started: an outage already under way is reported now, with the number of locked jobs. */
  start(lockedJobs: () => number): void {
    this.lockedJobs = lockedJobs;
    this.report();
  }

  /**
   * The app shuts down: no more lines. A call still in flight when the app closes its client fails as if the
   * store were out, and that is no outage.
   */
  stop(): void {
    this.lockedJobs = undefined;
  }

  /**
   * Whether a call sent at `sentAt` that failed belongs to an outage that has ended: its lines told it, and
   * the store has answered since.
   */
  ended(sentAt: number | undefined): boolean {
    return sentAt !== undefined && this.downSince === undefined && sentAt < this.backAt;
  }

  /** The store is out from `since` (`performance.now()`; by default now) on, unless it already was. */
  began(since = performance.now()): void {
    this.downSince ??= since;
  }

  /**
   * A call sent at `sentAt` got no answer in time although the connection looked fine (a
   * `LockProviderUnavailableError` that is `unanswered`): the store may be slow rather than gone. The outage
   * begins when that call was sent, but is reported (`reason` its cause) only once a call sent after this one
   * failed goes unanswered too. A single slow answer gives the short outage's warning once the store answers.
   */
  unanswered(reason: string, sentAt: number | undefined): void {
    this.began(sentAt);
    if (this.silenceSeenAt === undefined) this.silenceSeenAt = performance.now();
    else if (sentAt !== undefined && sentAt >= this.silenceSeenAt) this.cause ??= reason;
    this.failedFor(reason);
  }

  /**
   * A call failed, for `reason`, during the outage (it logs nothing of its own); with no cause known yet,
   * `reason` becomes the cause once the outage has lasted {@link OUTAGE_MS}.
   */
  failedFor(reason: string): void {
    this.began();
    if (performance.now() - this.downSince! >= OUTAGE_MS) this.cause ??= reason;
    this.failed();
    this.report();
  }

  /** The outage's cause is known (`reason`, unless one was given already): its line is written now. */
  causedBy(reason: string): void {
    this.began();
    this.cause ??= reason;
    this.report();
  }

  /** A call failed during the outage (it logs nothing of its own). */
  failed(): void {
    this.failedCalls += 1;
  }

  /** Writes the outage's line once its cause is known and the app has started; once per outage. */
  report(): void {
    if (this.reported || this.cause === undefined || !this.lockedJobs) return;
    this.reported = true;
    const jobs = this.lockedJobs();
    this.logger.error(
      `${this.store} is unreachable (${this.cause}): locked ticks are skipped until it is back; ` +
        `${jobs} locked job${jobs === 1 ? '' : 's'} affected`,
    );
  }

  /** The store answered: the line that says so (a short outage no line reported is counted in a warning). */
  back(): void {
    if (this.downSince === undefined) return;
    const outFor = describeOutage(performance.now() - this.downSince);
    if (this.reported) {
      this.logger.log(`${this.store} is reachable again after ${outFor}; locked ticks run again`);
    } else if (this.failedCalls > 0 && this.lockedJobs) {
      this.logger.warn(
        `${this.store}: unreachable for ${outFor}, now back; ` +
          `${this.failedCalls} call${this.failedCalls === 1 ? '' : 's'} to it failed meanwhile (skipped)`,
      );
    }
    this.downSince = undefined;
    this.backAt = performance.now();
    this.cause = undefined;
    this.reported = false;
    this.silenceSeenAt = undefined;
    this.failedCalls = 0;
  }
}
