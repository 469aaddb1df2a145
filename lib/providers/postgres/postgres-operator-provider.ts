import { forceUnlockMarker, readOwnerValue } from '../../core/provider/owner-value.js';
import type { SkipCounts } from '../../core/task/task-result.js';
import type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  PauseState,
  OperatorEntry,
  OperatorNote,
  TriggerRequest,
  TriggerResult,
} from '../../operators/cluster-records.js';
import type {
  ClusterReading,
  HealthReportClaim,
  HealthTurn,
  HealthTurnBid,
  LockState,
  OperatorProvider,
} from '../../operators/operator-provider.js';
import { operatorEntry, triggerRequest } from '../../operators/operator-records.js';
import { revived, storedJson } from '../../operators/stored-records.js';
import { operatorStatements } from './postgres-operator-statements.js';
import type { PostgresTables } from './postgres-schema.js';
import type { PostgresSession } from './postgres-session.js';

type Statements = ReturnType<typeof operatorStatements>;

/**
 * The operator console's store in PostgreSQL, in the tables beside a {@link PostgresLockProvider}'s locks:
 * the catalogue and heartbeats, a history per job (a ring of `historyLimit` slots, written by each run's
 * release in the release's own statement), skip counts, pauses (the lock row's `paused`, which the job
 * lock statements check), triggers taken by exactly one node (the node whose `DELETE` returns it), and a
 * force-release its holder sees as lost. One statement per call.
 */
export class PostgresOperatorProvider implements OperatorProvider {
  private readonly statements: Statements;

  constructor(
    private readonly session: PostgresSession,
    tables: PostgresTables,
    private readonly historyLimit: number,
  ) {
    this.statements = operatorStatements(tables);
  }

  async publish(
    node: ClusterNode,
    jobs: readonly CatalogueJob[],
    skips: SkipCounts,
    bid: HealthTurnBid,
  ): Promise<HealthTurn | null> {
    const { lease, unhealthy } = bid;
    const rows = [...skips].flatMap(([lock, reasons]) => [...reasons].map(([reason, count]) => [lock, reason, count]));
    const skipColumns = [0, 1, 2].map((column) => rows.map((row) => row[column]));
    const values = [node.node, node.lastSeen.getTime(), storedJson(node), JSON.stringify(jobs), lease, unhealthy];
    const [turn] = await this.session.run<HealthTurn>(this.statements.publish, [...values, ...skipColumns]);
    return turn ?? null;
  }

  async takeTriggers(jobNames: ReadonlySet<string>): Promise<TriggerRequest[]> {
    if (jobNames.size === 0) return [];
    const rows = await this.session.run<{ request: TriggerRequest }>(this.statements.takeTriggers, [[...jobNames]]);
    return rows.map((row) => revived(row.request));
  }

  async reportTrigger(id: string, result: TriggerResult): Promise<void> {
    await this.session.run(this.statements.reportTrigger, [id, JSON.stringify(result)]);
  }

  async forgetNodes(cutoff: Date): Promise<number> {
    return (await this.session.run(this.statements.forgetNodes, [cutoff.getTime()])).length;
  }

  async claimHealthReports(claims: readonly HealthReportClaim[]): Promise<HealthReportClaim[]> {
    if (claims.length === 0) return [];
    const values = [claims.map((c) => c.lockName), claims.map((c) => c.kind), claims.map((c) => c.at.getTime())];
    const rows = await this.session.run<{ name: string; kind: string; at: string }>(
      this.statements.claimHealthReports,
      values,
    );
    const claimed = new Set(rows.map((row) => `${row.name}|${row.kind}|${row.at}`));
    return claims.filter((claim) => claimed.has(`${claim.lockName}|${claim.kind}|${claim.at.getTime()}`));
  }

  async nodes(): Promise<ClusterNode[]> {
    return (await this.session.run<{ node: ClusterNode }>(this.statements.nodes, [])).map((row) => revived(row.node));
  }

  async jobs(): Promise<CatalogueJob[]> {
    return (await this.session.run<{ job: CatalogueJob }>(this.statements.jobs, [])).map((row) => row.job);
  }

  async job(jobName: string): Promise<CatalogueJob | undefined> {
    const [row] = await this.session.run<{ job: CatalogueJob }>(this.statements.job, [jobName]);
    return row?.job;
  }

  async history(lockName: string, limit: number): Promise<HistoryEntry[]> {
    const rows = await this.session.run<{ entry: HistoryEntry }>(this.statements.history, [lockName, limit]);
    return rows.map((row) => revived(row.entry));
  }

  async lockState(lockName: string): Promise<LockState> {
    const [row] = await this.session.run<LockRow>(this.statements.lockState, [lockName]);
    return row ? lockStateOf(row) : { holder: null, fencingToken: null, paused: null };
  }

  async clusterReading(limit: number): Promise<ClusterReading> {
    const [{ nodes, jobs, readings }] = await this.session.run<{
      nodes: ClusterNode[];
      jobs: CatalogueJob[];
      readings: (LockRow & { name: string; recent: HistoryEntry[] })[];
    }>(this.statements.clusterReading, [limit]);
    return {
      nodes: nodes.map((node) => revived(node)),
      jobs,
      readings: new Map(
        readings.map((row) => [
          row.name,
          { lock: lockStateOf(row), recent: row.recent.map((entry) => revived(entry)) },
        ]),
      ),
    };
  }

  async skips(): Promise<Map<string, Record<string, number>>> {
    const rows = await this.session.run<{ name: string; reason: string; count: string }>(this.statements.skips, []);
    const byLock = new Map<string, Record<string, number>>();
    for (const { name, reason, count } of rows) byLock.set(name, { ...byLock.get(name), [reason]: Number(count) });
    return byLock;
  }

  async pause(lockName: string, note: OperatorNote): Promise<boolean> {
    return (await this.steer(this.statements.pause, lockName, this.entry('pause', note))).length === 1;
  }

  async resume(lockName: string, note: OperatorNote): Promise<boolean> {
    return (await this.steer(this.statements.resume, lockName, this.entry('resume', note))).length === 1;
  }

  async requestTrigger(jobName: string, lockName: string, note: OperatorNote) {
    const entry = this.entry('trigger', note);
    const request: TriggerRequest = { ...triggerRequest(jobName, note), at: entry.at };
    const [row] = await this.steer(this.statements.requestTrigger, lockName, entry, jobName, storedJson(request));
    if (row?.queued) return { request, queued: true };
    // Pending: the trigger queued before this one. One queued by another node during this very statement is
    // not visible to it; a second statement sees it (unless a node took it meanwhile).
    const pending =
      row?.pending ??
      (await this.session.run<{ request: TriggerRequest }>(this.statements.pendingTrigger, [jobName]))[0]?.request;
    return { request: pending ? revived(pending) : request, queued: false };
  }

  async withdrawTrigger(jobName: string, id: string): Promise<boolean> {
    return (await this.session.run(this.statements.withdrawTrigger, [jobName, id])).length === 1;
  }

  async triggerResult(id: string): Promise<TriggerResult | undefined> {
    const [row] = await this.session.run<{ result: TriggerResult }>(this.statements.triggerResult, [id]);
    return row?.result;
  }

  async unlock(lockName: string, note: OperatorNote): Promise<string | undefined> {
    const entry = this.entry('unlock', note);
    const [row] = await this.steer(
      this.statements.unlock,
      lockName,
      entry,
      forceUnlockMarker(note.actor, entry.at.getTime()),
    );
    return row?.former ?? undefined;
  }

  private entry(type: OperatorEntry['type'], note: OperatorNote): OperatorEntry {
    return operatorEntry(type, note);
  }

  /** Runs an operator statement: `$1` lock name, `$2` its history entry, `$3` the history limit, then `more`. */
  private steer(statement: Statements['pause'], lockName: string, entry: OperatorEntry, ...more: unknown[]) {
    return this.session.run<{ former?: string | null; queued?: TriggerRequest; pending?: TriggerRequest }>(statement, [
      lockName,
      storedJson(entry),
      this.historyLimit,
      ...more,
    ]);
  }
}

/** A lock row as the `lockState` statements read it; all null for a lock never taken nor paused. */
interface LockRow {
  readonly owner: string | null;
  /** A string in a row, a number in a JSON object: `Number()` reads both. */
  readonly fencing_token: string | number | null;
  readonly paused: PauseState | null;
  readonly ttl: string | number | null;
}

function lockStateOf(row: LockRow): LockState {
  const owner = row.owner === null ? undefined : readOwnerValue(row.owner);
  return {
    holder: owner ? { node: owner.node, since: new Date(owner.since), ttl: Number(row.ttl) } : null,
    fencingToken: owner ? Number(row.fencing_token) : null,
    paused: row.paused === null ? null : revived(row.paused),
  };
}
