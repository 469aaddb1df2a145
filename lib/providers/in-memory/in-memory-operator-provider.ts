import type { SkipCounts } from '../../core/task/task-result.js';
import type {
  CatalogueJob,
  ClusterNode,
  HistoryEntry,
  PauseState,
  OperatorNote,
  TriggerRequest,
  TriggerResult,
} from '../../operators/cluster-records.js';
import {
  HEALTH_REPORT_TTL,
  TRIGGER_RESULT_TTL,
  watchedJobs,
  type ClusterReading,
  type HealthReportClaim,
  type HealthTurn,
  type HealthTurnBid,
  type UnhealthyJobs,
  type LockState,
  type OperatorProvider,
  type TriggerQueueing,
} from '../../operators/operator-provider.js';
import { pauseState, operatorEntry, triggerRequest } from '../../operators/operator-records.js';
import type { InMemoryLocks } from './in-memory-locks.js';

/** The health turn before any bid: free, keeping no unhealthy job. */
const NO_HEALTH_TURN: { readonly node: string; readonly until: number; readonly unhealthy: UnhealthyJobs } = {
  node: '',
  until: 0,
  unhealthy: {},
};

/**
 * The operator store in this process's memory, beside an {@link InMemoryLockProvider}'s locks: the whole
 * console (admin service, status page) works without Redis, with the Redis store's semantics (the
 * history capped at `historyLimit`, a trigger taken by one node, a force-release its holder sees as lost).
 */
export class InMemoryOperatorProvider implements OperatorProvider {
  private readonly nodesByName = new Map<string, ClusterNode>();
  private readonly catalogue = new Map<string, CatalogueJob>();
  /** Lock name → reason → count. */
  private readonly skipCounts = new Map<string, Record<string, number>>();
  private readonly triggers = new Map<string, TriggerRequest>();
  private readonly triggerResults = new Map<string, { readonly result: TriggerResult; readonly at: number }>();
  private readonly pauses = new Map<string, PauseState>();
  /** Lock name → history, newest first. */
  private readonly histories = new Map<string, HistoryEntry[]>();
  /** `<lock name>|<occurrence>` → when its missed report was claimed (epoch ms). */
  private readonly healthReports = new Map<string, number>();
  /** Who holds the health turn, until when (epoch ms), and the unhealthy jobs it keeps. */
  private healthTurn = NO_HEALTH_TURN;

  constructor(
    private readonly locks: InMemoryLocks,
    private readonly historyLimit: number,
  ) {}

  async publish(
    node: ClusterNode,
    jobs: readonly CatalogueJob[],
    skips: SkipCounts,
    bid: HealthTurnBid,
  ): Promise<HealthTurn | null> {
    this.nodesByName.set(node.node, node);
    for (const job of jobs) this.catalogue.set(job.jobName, job);
    for (const [lock, reasons] of skips) {
      const byReason = { ...this.skipCounts.get(lock) };
      for (const [reason, count] of reasons) byReason[reason] = (byReason[reason] ?? 0) + count;
      this.skipCounts.set(lock, byReason);
    }
    const now = Date.now();
    const turn = this.healthTurn;
    const held = turn.node === node.node && turn.until > now;
    if (!held && turn.until > now) return null;
    // A node that takes the turn keeps the former holder's unhealthy jobs; it writes its own from its next bid on.
    this.healthTurn = { node: node.node, until: now + bid.lease, unhealthy: held ? bid.unhealthy : turn.unhealthy };
    return { taken: !held, unhealthy: this.healthTurn.unhealthy };
  }

  async takeTriggers(jobNames: ReadonlySet<string>): Promise<TriggerRequest[]> {
    const taken = [...this.triggers.values()].filter((request) => jobNames.has(request.jobName));
    for (const request of taken) this.triggers.delete(request.jobName);
    return taken;
  }

  async reportTrigger(id: string, result: TriggerResult): Promise<void> {
    const now = Date.now();
    // Bounded like the Redis store's expiring keys: results nobody asked for within the TTL are dropped.
    for (const [old, { at }] of this.triggerResults) if (now - at > TRIGGER_RESULT_TTL) this.triggerResults.delete(old);
    this.triggerResults.set(id, { result, at: now });
  }

  async forgetNodes(cutoff: Date): Promise<number> {
    const gone = [...this.nodesByName.values()].filter((node) => node.lastSeen < cutoff);
    for (const node of gone) this.nodesByName.delete(node.node);
    return gone.length;
  }

  async claimHealthReports(claims: readonly HealthReportClaim[]): Promise<HealthReportClaim[]> {
    const now = Date.now();
    for (const [key, at] of this.healthReports) if (now - at > HEALTH_REPORT_TTL) this.healthReports.delete(key);
    return claims.filter(({ lockName, kind, at }) => {
      const key = `${lockName}|${kind}|${at.getTime()}`;
      if (this.healthReports.has(key)) return false;
      this.healthReports.set(key, now);
      return true;
    });
  }

  async nodes(): Promise<ClusterNode[]> {
    return [...this.nodesByName.values()];
  }

  async jobs(): Promise<CatalogueJob[]> {
    return [...this.catalogue.values()];
  }

  async job(jobName: string): Promise<CatalogueJob | undefined> {
    return this.catalogue.get(jobName);
  }

  async history(lockName: string, limit: number): Promise<HistoryEntry[]> {
    return (this.histories.get(lockName) ?? []).slice(0, limit);
  }

  async lockState(lockName: string): Promise<LockState> {
    return lockStateIn(this.locks, this.pauses, lockName);
  }

  async clusterReading(limit: number): Promise<ClusterReading> {
    const nodes = [...this.nodesByName.values()];
    const jobs = watchedJobs(nodes, [...this.catalogue.values()]);
    const readings = new Map(
      jobs.map(({ lockName }) => {
        const recent = (this.histories.get(lockName) ?? []).slice(0, limit);
        return [lockName, { lock: lockStateIn(this.locks, this.pauses, lockName), recent }];
      }),
    );
    return { nodes, jobs, readings };
  }

  async skips(): Promise<Map<string, Record<string, number>>> {
    return new Map([...this.skipCounts].map(([lock, counts]) => [lock, { ...counts }]));
  }

  async pause(lockName: string, note: OperatorNote): Promise<boolean> {
    if (this.pauses.has(lockName)) return false;
    const state = pauseState(note);
    this.pauses.set(lockName, state);
    this.record(lockName, operatorEntry('pause', note, state.at));
    return true;
  }

  async resume(lockName: string, note: OperatorNote): Promise<boolean> {
    if (!this.pauses.delete(lockName)) return false;
    this.record(lockName, operatorEntry('resume', note));
    return true;
  }

  async requestTrigger(jobName: string, lockName: string, note: OperatorNote): Promise<TriggerQueueing> {
    const pending = this.triggers.get(jobName);
    if (pending) return { request: pending, queued: false };
    const request = triggerRequest(jobName, note);
    this.triggers.set(jobName, request);
    this.record(lockName, operatorEntry('trigger', note, request.at));
    return { request, queued: true };
  }

  async withdrawTrigger(jobName: string, id: string): Promise<boolean> {
    if (this.triggers.get(jobName)?.id !== id) return false;
    return this.triggers.delete(jobName);
  }

  async triggerResult(id: string): Promise<TriggerResult | undefined> {
    return this.triggerResults.get(id)?.result;
  }

  async unlock(lockName: string, note: OperatorNote): Promise<string | undefined> {
    const formerNode = this.locks.forceRelease(lockName);
    // A free lock: nothing to release, nothing recorded.
    if (formerNode !== undefined) this.record(lockName, { ...operatorEntry('unlock', note), formerNode });
    return formerNode;
  }

  /**
   * @internal Forgets every skip count, trigger, pause, history entry, missed report and the health turn. The nodes
   * and the catalogue stay: they describe the apps still running, which publish them only when they change.
   */
  clearRecords(): void {
    const records = [this.skipCounts, this.triggers, this.triggerResults, this.pauses, this.histories];
    for (const kept of [...records, this.healthReports]) {
      kept.clear();
    }
    this.healthTurn = NO_HEALTH_TURN;
  }

  /** @internal Whether an operator has paused the job that locks `lockName`. */
  isPaused(lockName: string): boolean {
    return this.pauses.has(lockName);
  }

  /** @internal Adds `entry` to the lock's history, keeping the newest `historyLimit`. */
  record(lockName: string, entry: HistoryEntry): void {
    const history = [entry, ...(this.histories.get(lockName) ?? [])];
    this.histories.set(lockName, history.slice(0, this.historyLimit));
  }
}

/** A lock's state in `locks`, with its job's pause (not a method: tests count the store's method calls). */
function lockStateIn(locks: InMemoryLocks, pauses: ReadonlyMap<string, PauseState>, lockName: string): LockState {
  const now = performance.now();
  const held = locks.holder(lockName, now);
  return {
    holder: held ? { node: held.node, since: new Date(held.since), ttl: Math.ceil(held.expiresAt - now) } : null,
    fencingToken: held ? (locks.fence(lockName) ?? null) : null,
    paused: pauses.get(lockName) ?? null,
  };
}
