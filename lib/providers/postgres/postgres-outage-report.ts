import type { Pool } from 'pg';
import { describeOutage } from '../../core/provider/duration.js';
import { LockStoreUnavailableError } from '../../core/provider/errors.js';
import type { SchedulerLockLogger } from '../../core/executor/logger.js';
import type { StoreOutageMonitor } from '../../core/provider/store-outage-report.js';
import { postgresFailure } from './postgres-failures.js';

/**
 * One error line when PostgreSQL becomes unreachable — `host:port/database`, the cause, that locked ticks
 * are skipped and how many locked jobs the app has — and one line when it is back, with how long it was
 * out. The statements that fail meanwhile log nothing of their own. The outage is learnt from the
 * provider's failed statements (a refused or lost connection, a `statement_timeout`, an attempt past
 * `acquireTimeout`) and from the pool's idle connections that break (a server restart); it ends with the
 * first statement answered.
 */
export class PostgresOutageReport implements StoreOutageMonitor {
  /** When the outage began (`performance.now()`), while there is one. */
  private downSince: number | undefined;
  /** Why PostgreSQL is unreachable, once known. */
  private cause: string | undefined;
  private reported = false;
  /** Calls that failed during the outage. */
  private failedCalls = 0;
  /** The number of locked jobs, once the app has started: a line waits for it. */
  private lockedJobs: (() => number) | undefined;
  private readonly idleFailure = (error: Error) => {
    const failure = postgresFailure(this.endpoint, error, false);
    if (failure instanceof LockStoreUnavailableError) this.down(failure.reason);
  };

  constructor(
    private readonly pool: Pool,
    private readonly endpoint: string,
    private readonly logger: SchedulerLockLogger,
  ) {
    pool.on('error', this.idleFailure);
  }

  start(lockedJobs: () => number): void {
    this.lockedJobs = lockedJobs;
    this.report();
  }

  /** Stops listening to the pool: it is the app's, and ending it is no outage. */
  close(): void {
    this.pool.off('error', this.idleFailure);
  }

  covers(error: unknown): boolean {
    if (!(error instanceof LockStoreUnavailableError)) return false;
    this.failedCalls += 1;
    this.down(error.reason);
    return true;
  }

  answered(): void {
    if (this.downSince === undefined) return;
    const outFor = describeOutage(performance.now() - this.downSince);
    if (this.reported) {
      this.logger.log(`PostgreSQL ${this.endpoint} is reachable again after ${outFor}; locked ticks run again`);
    } else if (this.failedCalls > 0 && this.lockedJobs) {
      const calls = `${this.failedCalls} call${this.failedCalls === 1 ? '' : 's'}`;
      this.logger.warn(`PostgreSQL ${this.endpoint}: unreachable for ${outFor}, now back; ${calls} failed meanwhile`);
    }
    this.downSince = undefined;
    this.cause = undefined;
    this.reported = false;
    this.failedCalls = 0;
  }

  private down(reason: string): void {
    this.downSince ??= performance.now();
    this.cause ??= reason;
    this.report();
  }

  private report(): void {
    if (this.reported || this.cause === undefined || !this.lockedJobs) return;
    this.reported = true;
    const jobs = this.lockedJobs();
    this.logger.error(
      `PostgreSQL ${this.endpoint} is unreachable (${this.cause}): locked ticks are skipped until it is back; ` +
        `${jobs} locked job${jobs === 1 ? '' : 's'} affected`,
    );
  }
}
