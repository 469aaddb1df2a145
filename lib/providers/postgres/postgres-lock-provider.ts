import type { Pool } from 'pg';
import { ttlMillis } from '../../core/provider/abstract-simple-lock.js';
import type { CallBatch } from '../../core/provider/call-batch.js';
import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import { assertCallerOwner, OwnerValues } from '../../core/provider/owner-value.js';
import type {
  JobRecord,
  LeaseRenewal,
  LeaseRenewalOutcome,
  OccurrenceClaim,
  RecoveryClaim,
  SimpleLock,
} from '../../core/provider/lock-provider.js';
import type { SchedulerLockLogger } from '../../core/executor/logger.js';
import type {
  JobRecordReader,
  LeaseRenewingLockProvider,
  OutageReportingLockProvider,
  OwnerAddressedLockProvider,
  OwnerRelease,
  OwnerRenewal,
  RecoveringLockProvider,
  RetryingLockProvider,
  StartupCheckingLockProvider,
} from '../../core/provider/provider-abilities.js';
import type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../../operators/operator-abilities.js';
import { statementBatch } from './postgres-batches.js';
import { postgresTables, type PostgresTables } from './postgres-schema.js';
import { AbandonedLocks } from './postgres-abandoned-locks.js';
import { assertPool, PostgresSession } from './postgres-session.js';
import {
  JOB_LOCK,
  OCCURRENCE_LOCK,
  PLAIN_LOCK,
  ownerOutcome,
  PostgresSimpleLock,
  releaseParameters,
  renewLocks,
  type OwnerCheckRow,
  type LockUse,
  type PostgresLockContext,
  type ReleaseRequest,
} from './postgres-simple-lock.js';
import { postgresProviderSettings, type PostgresLockProviderOptions } from './postgres-options.js';
import { PostgresOperatorProvider } from './postgres-operator-provider.js';
import { PostgresOutageReport } from './postgres-outage-report.js';
import { postgresUser } from './postgres-failures.js';
import { checkPostgresProvider } from './postgres-startup-check.js';
import { claimRefusal, postgresStatements, type Statement } from './postgres-statements.js';
import { claimBatches, unusedLock, type ClaimRow, type JobLockRow, type NewHolder } from './postgres-claim-batches.js';
import { ownerStatements, type OwnerStatements } from './postgres-owner-statements.js';
import { ReleasedNames, settleDelay } from './postgres-released-names.js';
import {
  jobRecordOf,
  recoveryClaim,
  recoveryStatement,
  type JobRecordRow,
  type RecoveryRow,
} from './postgres-recovery.js';

/**
 * Locks in PostgreSQL (`pg` ^8 `Pool`), ShedLock's JDBC design: one row per lock name in
 * `<schema>.<tablePrefix>locks`, taken by one `INSERT … ON CONFLICT (name) DO UPDATE … WHERE lock_until <=
 * clock_timestamp()` and released by one statement that applies `lockAtLeastFor`. Every expiry and grace is
 * measured on the database's clock. A new row's `fencing_token` is that clock in µs, a taken-over row's its
 * last one plus one; a plain lock's row is deleted when it is released, a job's is kept (`postgres-statements.ts`).
 * A burst's claims, job locks and run ends each go as one statement; `keepAlive` leases are renewed together, one
 * statement per interval.
 *
 * Statements run on connections of `pool` checked out for one statement each, never inside the app's
 * transactions. The pool is the caller's: the provider never ends it. Give it a small pool of its own
 * (see the README, "PostgreSQL"), so that the app's busy connections cannot delay a release.
 */
export class PostgresLockProvider
  implements
    LeaseRenewingLockProvider,
    RecoveringLockProvider,
    RetryingLockProvider,
    OwnerAddressedLockProvider,
    JobRecordReader,
    JobLockProvider,
    OperatorLockProvider,
    OutageReportingLockProvider,
    StartupCheckingLockProvider
{
  readonly node: string;
  /** The quoted, schema-qualified names of the tables. */
  readonly tables: PostgresTables;
  private readonly context: PostgresLockContext;
  private readonly claims: CallBatch<NewHolder & { occurrence: number }, ClaimRow | undefined>;
  private readonly jobLocks: CallBatch<NewHolder & { manual: boolean }, JobLockRow | undefined>;
  private readonly owners = new OwnerValues();
  private readonly takeOvers: Record<'recover' | 'retry', Statement>;
  private readonly byOwner: OwnerStatements;
  private readonly pool: Pool;
  private readonly operators: PostgresOperatorProvider;

  constructor(pool: Pool, options?: PostgresLockProviderOptions) {
    assertPool(pool);
    this.pool = pool;
    const { node, schema, tablePrefix, historyLimit, statementTimeout, createTables } =
      postgresProviderSettings(options);
    this.node = node;
    this.tables = postgresTables({ schema, tablePrefix });
    const session = new PostgresSession(pool, this.tables, statementTimeout, createTables);
    const statements = postgresStatements(this.tables);
    const finishes = statementBatch<ReleaseRequest, OwnerCheckRow>(session, statements.release, (requests) =>
      releaseParameters(requests, historyLimit),
    );
    const abandoned = new AbandonedLocks(session, this.tables.locks);
    const released = new ReleasedNames(settleDelay(statementTimeout));
    this.context = { session, abandoned, statements, finishes, node: this.node, historyLimit, released };
    this.takeOvers = {
      recover: recoveryStatement(this.tables, 'recover'),
      retry: recoveryStatement(this.tables, 'retry'),
    };
    this.byOwner = ownerStatements(this.tables);
    this.operators = new PostgresOperatorProvider(session, this.tables, historyLimit);
    ({ claims: this.claims, jobLocks: this.jobLocks } = claimBatches(session, statements, abandoned, this.node));
  }

  /** `host:port/database` of the pool, for messages (never a user name or password). */
  get endpoint(): string {
    return this.context.session.endpoint;
  }

  /** Creates the locks table unless it exists (or `createTables` is off); the first statement does it anyway. */
  createTables(): Promise<void> {
    return this.context.session.createTables();
  }

  /**
   * Checks once, at startup, the pool's credentials and database, the tables and the user's privileges on
   * them (see {@link checkPostgresProvider}); the module calls it before the jobs are mounted.
   */
  checkProvider(): Promise<void> {
    return checkPostgresProvider(this.context.session, this.tables, postgresUser(this.pool));
  }

  /** The operator console's records, in the tables beside the locks. */
  operatorProvider(): PostgresOperatorProvider {
    return this.operators;
  }

  /** One log line per outage of the pool's server, for the module (see {@link PostgresOutageReport}). */
  reportOutages(logger: SchedulerLockLogger): PostgresOutageReport {
    return new PostgresOutageReport(this.pool, this.endpoint, logger);
  }

  lock(configuration: LockConfiguration, options?: { owner?: string }): Promise<SimpleLock | undefined> {
    const { session, statements } = this.context;
    const owner = this.owners.forLock(this.node, options);
    const values = [configuration.name, owner, this.node, ttlMillis(configuration.lockAtMostFor)];
    const unused = (backend: number) =>
      this.context.abandoned.add(backend, [unusedLock({ name: configuration.name, owner })]);
    return session
      .run<{ fencing_token: string }>(statements.lock, values, unused)
      .then(([row]) => row && this.lockOf(configuration, owner, row, PLAIN_LOCK));
  }

  lockJob(configuration: LockConfiguration, manual: boolean): Promise<JobLockClaim> {
    const request = { ...this.newHolder(configuration), manual };
    return this.jobLocks.call(request).then((row): JobLockClaim => {
      if (row?.fencing_token != null) return { lock: this.lockOf(configuration, request.owner, row, JOB_LOCK) };
      return { refused: claimRefusal<'locked' | 'paused'>(row) };
    });
  }

  lockOccurrence(configuration: LockConfiguration, occurrence: Date): Promise<OccurrenceClaim> {
    const request = { ...this.newHolder(configuration), occurrence: occurrence.getTime() };
    return this.claims.call(request).then((row): OccurrenceClaim => {
      if (row?.fencing_token != null) return { lock: this.lockOf(configuration, request.owner, row, OCCURRENCE_LOCK) };
      const refused = claimRefusal(row);
      if (refused !== 'already-ran') return { refused };
      return { refused, running: Number(row?.occurrence) === request.occurrence && row?.run_state === 'running' };
    });
  }

  recoverOccurrence(configuration: LockConfiguration, occurrence: Date, maxAttempts: number, grace: number) {
    return this.takeOver('recover', configuration, occurrence, maxAttempts, grace);
  }

  retryOccurrence(configuration: LockConfiguration, occurrence: Date, maxAttempts: number, backoff: number) {
    return this.takeOver('retry', configuration, occurrence, maxAttempts, backoff);
  }

  /** A recovery after `wait` ms of grace, or a retry after a first backoff of `wait` ms. */
  private async takeOver(
    kind: 'recover' | 'retry',
    configuration: LockConfiguration,
    occurrence: Date,
    maxAttempts: number,
    wait: number,
  ): Promise<RecoveryClaim> {
    const { owner, ttl, name } = this.newHolder(configuration);
    const values: unknown[] = [name, owner, this.node, ttl, occurrence.getTime(), maxAttempts, Math.ceil(wait)];
    if (kind === 'recover') values.push(this.context.historyLimit); // for the crashed attempt's history entry
    const unused = (backend: number) => this.context.abandoned.add(backend, [unusedLock({ name, owner })]);
    const [row] = await this.context.session.run<RecoveryRow>(this.takeOvers[kind], values, unused);
    return recoveryClaim(row, (fence) => this.lockOf(configuration, owner, { fencing_token: fence }, OCCURRENCE_LOCK));
  }

  async readJobRecord(name: string): Promise<JobRecord | undefined> {
    return jobRecordOf((await this.context.session.run<JobRecordRow>(this.context.statements.readRecord, [name]))[0]);
  }

  renewByOwner(name: string, owner: string, ttl: number): Promise<OwnerRenewal> {
    assertCallerOwner(owner);
    const renewing = this.context.session.run<OwnerCheckRow>(this.byOwner.renewByOwner, [name, owner, ttlMillis(ttl)]);
    return renewing.then(([row]) => ownerOutcome(row, 'renewed'));
  }

  releaseByOwner(name: string, owner: string): Promise<OwnerRelease> {
    assertCallerOwner(owner);
    const { session, released } = this.context;
    const due = released.takeDue();
    const releasing = session.run<OwnerCheckRow>(this.byOwner.releaseByOwner, [name, owner, due, released.settle]);
    return releasing.then(
      ([row]) => {
        const outcome = ownerOutcome(row, 'released');
        if (outcome === 'released') released.add(name);
        return outcome;
      },
      (failure: unknown) => {
        released.restore(due);
        throw failure;
      },
    );
  }

  renewLeases(renewals: readonly LeaseRenewal[]): Promise<LeaseRenewalOutcome[]> {
    return renewLocks(this.context, renewals);
  }

  private newHolder(configuration: LockConfiguration): NewHolder {
    return { name: configuration.name, owner: this.ownerValue(), ttl: ttlMillis(configuration.lockAtMostFor) };
  }

  private lockOf(configuration: LockConfiguration, owner: string, row: { fencing_token: unknown }, use: LockUse) {
    return new PostgresSimpleLock(this.context, owner, configuration, Number(row.fencing_token), use);
  }

  /** A lock's owner value: who took it and when, for operators, and a part unique to this acquisition. */
  private ownerValue(): string {
    return this.owners.next(this.node);
  }
}
