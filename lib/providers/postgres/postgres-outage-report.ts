import type { Pool } from 'pg';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import { OutageLines } from '../../core/provider/outage-lines.js';
import type { SchedulerLockLogger } from '../../core/executor/logger.js';
import type { ProviderOutageMonitor } from '../../core/provider/store-outage-report.js';
import { postgresFailure } from './postgres-failures.js';

/**
 * One error line when PostgreSQL becomes unreachable — `host:port/database`, the cause, that locked ticks
 * are skipped and how many locked jobs the app has — and one line when it is back, with how long it was
 * out. The statements that fail meanwhile log nothing of their own. The outage is learnt from the
 * provider's failed statements (a refused or lost connection; a `statement_timeout` or an attempt past
 * `acquireTimeout`, once a second statement sent after the first timed out goes unanswered too, or once
 * statements have failed for `OUTAGE_MS`; the rule: `OutageLines`) and from
 * the pool's idle connections that break (a server restart); it ends with the first statement answered.
 */
export class PostgresOutageReport implements ProviderOutageMonitor {
  private readonly lines: OutageLines;
  private readonly idleFailure = (error: Error) => {
    const failure = postgresFailure(this.endpoint, error, false);
    if (failure instanceof LockProviderUnavailableError) this.down(failure.reason);
  };

  constructor(
    private readonly pool: Pool,
    private readonly endpoint: string,
    logger: SchedulerLockLogger,
  ) {
    this.lines = new OutageLines(`PostgreSQL ${endpoint}`, logger);
    pool.on('error', this.idleFailure);
  }

  start(lockedJobs: () => number): void {
    this.lines.start(lockedJobs);
  }

  /** Stops listening to the pool: it is the app's, and ending it is no outage. */
  close(): void {
    this.pool.off('error', this.idleFailure);
    this.lines.stop();
  }

  failed(error: unknown, sentAt?: number): boolean {
    if (!(error instanceof LockProviderUnavailableError)) return false;
    if (this.lines.ended(sentAt)) return true;
    if (error.unanswered) {
      this.lines.unanswered(error.reason, sentAt);
      return true;
    }
    this.lines.failed();
    this.down(error.reason);
    return true;
  }

  answered(): void {
    this.lines.back();
  }

  private down(reason: string): void {
    this.lines.causedBy(reason);
  }
}
