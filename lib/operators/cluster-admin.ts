import { cronFireTimes, nextCronFireTime } from './next-fire-time.js';
import { jobHealth, type HealthPolicy, type ClusterJobHealth } from './job-health.js';
import type { CatalogueJob, ClusterNode, HistoryEntry, OperatorNote, TriggerResult } from './cluster-records.js';
import { jobOverview, type JobOverview } from './job-overview.js';
import type { LockReading, OperatorProvider } from './operator-provider.js';
import { checkedOperatorNote } from './operator-note.js';

/** A node counts as gone once it has missed this many heartbeats. */
const MISSED_HEARTBEATS = 3;
/** How many history entries the last run is looked for in (operator actions stand between runs). */
const LAST_RUN_LOOKBACK = 20;
/** Health's defaults: an occurrence is late 30 s after its time; three failed runs in a row are failing. */
export const DEFAULT_HEALTH_POLICY: HealthPolicy = { grace: 30_000, failingAfter: 3, pauseAfter: null };
/** How often a `trigger` looks whether a node has taken it, and for how long at most. */
const TRIGGER_POLL_MS = 100;

/** Thrown for a job name no live node has published. */
export class UnknownJobError extends Error {
  override readonly name = 'UnknownJobError';
  constructor(readonly jobName: string) {
    super(`No node of the cluster runs a locked job named "${jobName}"`);
  }
}

/**
 * What a `trigger` did. `triggered: true` only once a node has started the run. Otherwise `reason` says why not:
 * - `running`: a run holds the job's lock (on `holdingNode`);
 * - `pending`: another trigger of the job (`id`, by `actor`) waits for a node; that one runs, this one is dropped;
 * - `skipped`: the node that took it could not run it (`result.reason`, e.g. a run took the lock meanwhile);
 * - `not-taken`: no node took it in time; it is withdrawn and will not run;
 * - `unanswered`: a node took it but did not say in time whether the run started: see the job's history.
 */
export type TriggerOutcome =
  | { readonly triggered: true; readonly id: string; readonly result: TriggerResult }
  | { readonly triggered: false; readonly reason: 'running'; readonly holdingNode: string }
  | { readonly triggered: false; readonly reason: 'pending'; readonly id: string; readonly actor: string }
  | { readonly triggered: false; readonly reason: 'skipped'; readonly id: string; readonly result: TriggerResult }
  | { readonly triggered: false; readonly reason: 'not-taken' | 'unanswered'; readonly id: string };

/**
 * The operator's view of a cluster and the operator actions, from any process that reaches its store: the
 * admin service of an app, the CLI, the status page. Framework-free; reads and writes through an
 * {@link OperatorProvider}, whichever store keeps it.
 */
export class ClusterAdmin {
  constructor(
    private readonly store: OperatorProvider,
    /** How often nodes send a heartbeat (ms): a node silent for 3 of them is gone. */
    private readonly heartbeatInterval: number,
    /** How strict {@link listHealth} is. */
    private readonly healthPolicy: HealthPolicy = DEFAULT_HEALTH_POLICY,
  ) {}

  /**
   * The health of every job a known node runs, by name: also of a job whose nodes are all gone, until they are
   * forgotten (an hour after their last heartbeat). One read, however many jobs:
   * {@link OperatorProvider.clusterReading}.
   */
  async listHealth(): Promise<ClusterJobHealth[]> {
    const { nodes, jobs, readings } = await this.store.clusterReading(LAST_RUN_LOOKBACK);
    const live = this.live(nodes);
    const sorted = [...jobs].sort((a, b) => a.jobName.localeCompare(b.jobName));
    return Promise.all(sorted.map((job) => this.health(job, live, readings.get(job.lockName)!)));
  }

  /** One job's health; {@link UnknownJobError} when no node ever published it. */
  async getHealth(jobName: string): Promise<ClusterJobHealth> {
    const job = await this.catalogued(jobName);
    const [nodes, lock, recent] = await Promise.all([
      this.listNodes(),
      this.store.lockState(job.lockName),
      this.store.history(job.lockName, LAST_RUN_LOOKBACK),
    ]);
    return this.health(job, nodes, { lock, recent });
  }

  /** The nodes whose heartbeat is recent, by name. */
  async listNodes(): Promise<ClusterNode[]> {
    return this.live(await this.store.nodes());
  }

  /** Those of `nodes` whose heartbeat is recent, by name. */
  private live(nodes: readonly ClusterNode[]): ClusterNode[] {
    const cutoff = Date.now() - MISSED_HEARTBEATS * this.heartbeatInterval;
    const live = nodes.filter((node) => node.lastSeen.getTime() >= cutoff).sort(byName);
    // The heartbeat of a node that runs a version before elections has none.
    return live.map((node) => (node.elections ? node : { ...node, elections: [] }));
  }

  /** Every job a live node runs, with its lock, pause, last run and next fire time. */
  async listJobs(): Promise<JobOverview[]> {
    const [jobs, nodes, skips] = await Promise.all([this.store.jobs(), this.listNodes(), this.store.skips()]);
    const running = runningNodes(nodes);
    const live = jobs.filter((job) => running.has(job.jobName)).sort((a, b) => a.jobName.localeCompare(b.jobName));
    return Promise.all(live.map((job) => this.overview(job, running.get(job.jobName)!, skips.get(job.lockName))));
  }

  /** One job's overview; {@link UnknownJobError} when no live node runs it. */
  async getJob(jobName: string): Promise<JobOverview> {
    const [{ job, nodes }, skips] = await Promise.all([this.liveJob(jobName), this.store.skips()]);
    return this.overview(job, runningNodes(nodes).get(jobName) ?? [], skips.get(job.lockName));
  }

  /** The job's last `limit` runs and operator actions, newest first. */
  async history(jobName: string, limit = 50): Promise<HistoryEntry[]> {
    return this.store.history((await this.catalogued(jobName)).lockName, limit);
  }

  /** Every node skips the job's ticks (reason `paused`) until {@link resume}; a run in progress goes on. */
  async pause(jobName: string, note: OperatorNote): Promise<boolean> {
    const checked = checkedOperatorNote(note);
    return this.store.pause((await this.liveJob(jobName)).job.lockName, checked);
  }

  async resume(jobName: string, note: OperatorNote): Promise<boolean> {
    const checked = checkedOperatorNote(note);
    return this.store.resume((await this.catalogued(jobName)).lockName, checked);
  }

  /**
   * Runs the job once, soon, on one node that has it, recorded as a manual run; see {@link TriggerOutcome}.
   * Refused while a run holds its lock or another trigger of the job is pending; otherwise resolves once a node
   * has started or skipped it, or after `waitMs`, when one that no node has taken is withdrawn.
   */
  async trigger(jobName: string, note: OperatorNote, waitMs = 5_000): Promise<TriggerOutcome> {
    const checked = checkedOperatorNote(note);
    const { job } = await this.liveJob(jobName);
    const { holder } = await this.store.lockState(job.lockName);
    if (holder) return { triggered: false, reason: 'running', holdingNode: holder.node };
    const { request, queued } = await this.store.requestTrigger(jobName, job.lockName, checked);
    const { id } = request;
    if (!queued) return { triggered: false, reason: 'pending', id, actor: request.actor };
    let result = await this.triggerResult(id, waitMs);
    if (!result) {
      if (await this.store.withdrawTrigger(jobName, id)) return { triggered: false, reason: 'not-taken', id };
      // A node took it just now: its answer follows once it has tried the lock.
      result = await this.triggerResult(id, waitMs);
    }
    if (!result) return { triggered: false, reason: 'unanswered', id };
    return result.state === 'started'
      ? { triggered: true, id, result }
      : { triggered: false, reason: 'skipped', id, result };
  }

  /**
   * Force-releases the job's lock; its holder's run sees the lock lost (not-owner) at its next renewal or release.
   * `formerNode: null`: the lock was free, and nothing was written to the job's history.
   */
  async unlock(jobName: string, note: OperatorNote): Promise<{ formerNode: string | null }> {
    const checked = checkedOperatorNote(note);
    const formerNode = await this.store.unlock((await this.catalogued(jobName)).lockName, checked);
    return { formerNode: formerNode ?? null };
  }

  /** @internal Trigger `id`'s result, looked for every {@link TRIGGER_POLL_MS} for up to `waitMs`. */
  async triggerResult(id: string, waitMs: number): Promise<TriggerResult | undefined> {
    for (const until = Date.now() + waitMs; ;) {
      const result = await this.store.triggerResult(id);
      if (result || Date.now() >= until) return result;
      await new Promise((resolve) => setTimeout(resolve, TRIGGER_POLL_MS));
    }
  }

  /** The job's catalogue entry, live or not; {@link UnknownJobError} when no node ever published it. */
  async catalogued(jobName: string): Promise<CatalogueJob> {
    const job = await this.store.job(jobName);
    if (!job) throw new UnknownJobError(jobName);
    return job;
  }

  /** The job's catalogue entry and the live nodes; {@link UnknownJobError} when none of them runs it. */
  private async liveJob(jobName: string): Promise<{ job: CatalogueJob; nodes: ClusterNode[] }> {
    const [job, nodes] = await Promise.all([this.store.job(jobName), this.listNodes()]);
    if (!job || !nodes.some((node) => node.jobs.includes(jobName))) throw new UnknownJobError(jobName);
    return { job, nodes };
  }

  private async health(
    job: CatalogueJob,
    nodes: readonly ClusterNode[],
    { lock, recent }: LockReading,
  ): Promise<ClusterJobHealth> {
    const fireTimes = job.kind === 'cron' ? await cronFireTimes(job.schedule, job.timeZone) : null;
    // A job no live node runs is watched since now: only its history tells what it missed.
    const starts = nodes.filter((node) => node.jobs.includes(job.jobName)).map((node) => node.startedAt.getTime());
    const watchedSince = new Date(Math.min(Date.now(), ...starts));
    return jobHealth({ job, lock, recent, fireTimes, watchedSince }, this.healthPolicy, Date.now());
  }

  private async overview(job: CatalogueJob, nodes: string[], skips: Record<string, number> = {}): Promise<JobOverview> {
    const [lock, recent, nextFireAt] = await Promise.all([
      this.store.lockState(job.lockName),
      this.store.history(job.lockName, LAST_RUN_LOOKBACK),
      job.kind === 'cron' ? nextCronFireTime(job.schedule, job.timeZone) : null,
    ]);
    return jobOverview({ job, nodes, skips, lock, recent, nextFireAt: nextFireAt ?? null }, Date.now());
  }
}

/** Job name → the live nodes that run it. */
function runningNodes(nodes: readonly ClusterNode[]): Map<string, string[]> {
  const byJob = new Map<string, string[]>();
  for (const node of nodes) for (const job of node.jobs) byJob.set(job, [...(byJob.get(job) ?? []), node.node]);
  return byJob;
}

function byName(a: ClusterNode, b: ClusterNode): number {
  return a.node.localeCompare(b.node);
}
