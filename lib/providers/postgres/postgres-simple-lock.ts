import { AbstractSimpleLock, ttlMillis } from '../../core/provider/abstract-simple-lock.js';
import type { CallBatch } from '../../core/provider/call-batch.js';
import type { LockConfiguration } from '../../core/provider/lock-configuration.js';
import {
  LockNotHeldError,
  type LeaseRenewal,
  type LeaseRenewalOutcome,
  type LockNotHeldReason,
  type RunOutcome,
  type RunReport,
  type SimpleLock,
} from '../../core/provider/lock-provider.js';
import { runEntry, storedJson } from '../../operators/stored-records.js';
import type { AbandonedLocks } from './postgres-abandoned-locks.js';
import type { ReleasedNames } from './postgres-released-names.js';
import type { PostgresSession } from './postgres-session.js';
import type { PostgresStatements } from './postgres-statements.js';

/** How a lock stood when a release or renewal looked at it: ours (`mine`), and not yet expired (`live`). */
export interface OwnerCheckRow {
  readonly name: string;
  readonly mine: boolean | null;
  readonly live: boolean | null;
}

/** One lock to release: its name and owner, its `lockAtLeastFor` (ms), and the outcome to record, if any. */
export interface ReleaseRequest {
  readonly name: string;
  readonly owner: string;
  readonly atLeast: number;
  readonly outcome: RunOutcome | null;
  /** Whether the job record holds this run (an occurrence's run). */
  readonly recorded: boolean;
  /** The run's history entry (JSON, less its outcome), for a scheduled job's run that reported itself. */
  readonly entry: string | null;
}

/** What the provider's locks share: the session, the statements, and the batch of run ends. */
export interface PostgresLockContext {
  readonly session: PostgresSession;
  /** Locks that statements the node gave up on may have taken or renewed, released once the store answers. */
  readonly abandoned: AbandonedLocks;
  readonly statements: PostgresStatements;
  readonly finishes: CallBatch<ReleaseRequest, OwnerCheckRow | undefined>;
  /** This node, in history entries. */
  readonly node: string;
  /** How many entries each job's history keeps. */
  readonly historyLimit: number;
  /** The plain locks this node released, whose rows its next releases delete. */
  readonly released: ReleasedNames;
}

/** How a lock was taken: for a scheduled job's run (its end goes into the history), and in its job record. */
export interface LockUse {
  readonly ofJob: boolean;
  readonly recorded: boolean;
}

/** A lock for {@link PostgresLockProvider.lock}: no history, no record. */
export const PLAIN_LOCK: LockUse = { ofJob: false, recorded: false };
/** A scheduled job's plain tick: its end goes into the history. */
export const JOB_LOCK: LockUse = { ofJob: true, recorded: false };
/** An occurrence's run: in the job record too. */
export const OCCURRENCE_LOCK: LockUse = { ofJob: true, recorded: true };

/** The release statement's parameters for `requests`. */
export function releaseParameters(requests: readonly ReleaseRequest[], historyLimit: number): unknown[] {
  return [
    requests.map((request) => request.name),
    requests.map((request) => request.owner),
    requests.map((request) => request.atLeast),
    requests.map((request) => request.outcome),
    requests.map((request) => request.recorded),
    requests.map((request) => request.entry),
    historyLimit,
  ];
}

/** A lock in PostgreSQL: the row `configuration.name`, held by `owner` until its `lock_until`. */
export class PostgresSimpleLock extends AbstractSimpleLock {
  /** The server backend of a renewal the node gave up on: it may extend the lock after the run released it. */
  renewalAbandonedOn: number | undefined;

  constructor(
    private readonly context: PostgresLockContext,
    readonly owner: string,
    configuration: LockConfiguration,
    readonly fencingToken: number,
    private readonly use: LockUse,
  ) {
    // lockAtLeastFor is applied by the release statement, on the database's clock: no local time is kept.
    super(configuration, 0);
  }

  /** `outcome` is `undefined` for `unlock()`: nothing is recorded, so an occurrence's record still reads running. */
  protected release(_keepFor: number, outcome?: RunOutcome, report?: RunReport): Promise<void> {
    const released = this.releaseRow(outcome, report);
    const backend = this.renewalAbandonedOn;
    if (backend === undefined) return released;
    // Handed over only now: released before its release statement, the lock would read lost to the run.
    const { name, lockAtLeastFor } = this.configuration;
    const atLeast = Math.ceil(lockAtLeastFor);
    const handOver = () => this.context.abandoned.add(backend, [{ name, owner: this.owner, atLeast }]);
    return released.finally(handOver);
  }

  private releaseRow(outcome?: RunOutcome, report?: RunReport): Promise<void> {
    const { name, lockAtLeastFor } = this.configuration;
    const { recorded } = this.use;
    const request = {
      name,
      owner: this.owner,
      atLeast: Math.ceil(lockAtLeastFor),
      recorded,
      entry: this.entry(report),
    };
    const onCheck = (row: OwnerCheckRow | undefined) => {
      const checked = ownerOutcome(row, 'released');
      if (checked !== 'released') throw new LockNotHeldError(name, checked);
    };
    // A release the store never answered may be made again, to record the run's outcome once it does. Unless its
    // outcome is retried so (an occurrence's), the lock is released once the store answers: it would stay held.
    const failed = () => {
      this.releaseFailed();
      if (!(recorded && outcome !== undefined))
        this.context.abandoned.add(undefined, [{ name, owner: this.owner, atLeast: request.atLeast }]);
    };
    // A burst's claims that came back too late are released unused together, in one statement, like run ends.
    if (outcome !== undefined || request.entry !== null || recorded)
      return this.context.finishes.call({ ...request, outcome: outcome ?? null }, failed).then(onCheck);
    return this.unlockRow(request.atLeast, onCheck, failed);
  }

  /**
   * The plain unlock, one single-row UPDATE that also deletes the rows of plain locks this node released earlier,
   * once they may go; only a lock found lost costs a read more. One promise step over the statement's.
   */
  private unlockRow(atLeast: number, onCheck: (row: OwnerCheckRow | undefined) => void, failed: () => void) {
    const { session, statements, released } = this.context;
    const { name } = this.configuration;
    const due = released.takeDue();
    const unlocking = due.length
      ? session.count(statements.unlockForgetting, [name, this.owner, atLeast, due, released.settle])
      : session.count(statements.unlock, [name, this.owner, atLeast]);
    const fail = (failure: unknown): never => {
      failed();
      throw failure;
    };
    return unlocking.then(
      (changed: number): void | Promise<void> => {
        if (changed === 0) {
          const checking = session.run<OwnerCheckRow>(statements.ownerCheck, [name, this.owner]);
          return checking.then(([row]) => onCheck(row), fail);
        }
        if (!this.use.ofJob) released.add(name);
      },
      (failure: unknown) => {
        released.restore(due);
        return fail(failure);
      },
    );
  }

  protected async prolong(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const [outcome] = await renewLocks(this.context, [{ lock: this, ttl: configuration.lockAtMostFor }], true);
    if (outcome !== 'renewed') return undefined;
    return new PostgresSimpleLock(this.context, this.owner, configuration, this.fencingToken, this.use);
  }

  /** The history entry of a scheduled job's run that `report`s itself, less its outcome (the release adds it). */
  private entry(report: RunReport | undefined): string | null {
    if (!this.use.ofJob || !report) return null;
    return storedJson(runEntry(report, this.context.node, this.fencingToken));
  }
}

/**
 * Renews `renewals`' locks (each a {@link PostgresSimpleLock}) in one statement; `restart` (an extension)
 * also counts `lockAtLeastFor` from now.
 */
export async function renewLocks(
  { session, statements }: PostgresLockContext,
  renewals: readonly LeaseRenewal[],
  restart = false,
): Promise<LeaseRenewalOutcome[]> {
  const locks = renewals.map(({ lock }) => lock as PostgresSimpleLock);
  const parameters = [
    locks.map((lock) => lock.configuration.name),
    locks.map((lock) => lock.owner),
    renewals.map(({ ttl }) => ttlMillis(ttl)),
    renewals.map(() => restart),
  ];
  const abandoned = (backend: number) => locks.forEach((lock) => (lock.renewalAbandonedOn = backend));
  const rows = await session.run<OwnerCheckRow>(statements.renew, parameters, abandoned);
  const byName = new Map(rows.map((row) => [row.name, row]));
  return locks.map((lock) => ownerOutcome(byName.get(lock.configuration.name), 'renewed'));
}

/**
 * What an owner check `row` (none: no lock) says, decoded here alone: `done` when the lock was live and ours,
 * else why not. The statements answer `mine` and `live`, not owner-checks.ts' codes: this names their cases.
 */
export function ownerOutcome<D extends string>(row: OwnerCheckRow | undefined, done: D): D | LockNotHeldReason {
  if (!row?.live) return 'expired';
  return row.mine ? done : 'not-owner';
}
