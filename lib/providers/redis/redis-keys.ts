import type { HealthReportKind } from '../../operators/operator-provider.js';
/** The keys of one job: its lock, fencing counter, job record, pause marker and run history (one Cluster slot). */
export interface JobKeys {
  readonly lock: string;
  readonly fence: string;
  readonly record: string;
  readonly paused: string;
  readonly history: string;
}

/**
 * Where the Redis store keeps everything, under one `keyPrefix` (BullMQ's queue-keys idea: one module builds
 * every key). Per lock name, in one Cluster slot (the braces): `<prefix>:{<name>}` (the lock, its value the
 * owner value of `owner-value.ts`), `…:fence` (the last fencing token), `…:record` (an
 * occurrence's job record, a hash), `…:paused` (an operator's pause), `…:history` (a list, newest first) and
 * `…:missed:<occurrence>` (the claim of a missed occurrence's report).
 * For the cluster view: `<prefix>:nodes` (hash: node → node), `<prefix>:jobs` (hash: job name → catalogue
 * entry), `<prefix>:skips` (hash: `<lock>|<reason>` → count), `<prefix>:triggers` (hash: job name → request),
 * `<prefix>:trigger:<id>` (a trigger's result), `<prefix>:{health-turn}` (who reads the cluster's health, expiring)
 * and `…:unhealthy` (the unhealthy jobs its holder left, in the same slot).
 */
export class RedisKeys {
  readonly nodes: string;
  readonly catalogue: string;
  readonly skips: string;
  readonly triggers: string;
  readonly healthTurn: string;
  readonly unhealthyJobs: string;
  /** By lock name: those of the jobs the app runs and operators look at, as few as its job list. */
  private readonly jobKeysByName = new Map<string, JobKeys>();

  constructor(readonly prefix: string) {
    this.nodes = `${prefix}:nodes`;
    this.catalogue = `${prefix}:jobs`;
    this.skips = `${prefix}:skips`;
    this.triggers = `${prefix}:triggers`;
    this.healthTurn = `${prefix}:{health-turn}`;
    this.unhealthyJobs = `${this.healthTurn}:unhealthy`;
  }

  /** The key of a lock name (built on every call: `executeWithLock` names need not be few). */
  lock(name: string): string {
    return `${this.prefix}:{${name}}`;
  }

  /**
   * The fence key beside a lock key (same Cluster slot): a job's last fencing token, kept; a plain lock writes one
   * only while its token is ahead of the server's clock (`acquire.lua`).
   */
  fence(lockKey: string): string {
    return `${lockKey}:fence`;
  }

  /** The keys of the job that locks `name`, built once per name: every tick of the job asks for them. */
  job(name: string): JobKeys {
    let keys = this.jobKeysByName.get(name);
    if (!keys) {
      const lock = this.lock(name);
      const [record, paused, history] = [`${lock}:record`, `${lock}:paused`, `${lock}:history`];
      this.jobKeysByName.set(name, (keys = { lock, fence: this.fence(lock), record, paused, history }));
    }
    return keys;
  }

  /** The claim of the `kind` health report at `time` (epoch ms) of the job that locks `name`, in its slot. */
  healthReport(name: string, kind: HealthReportKind, time: number): string {
    return `${this.lock(name)}:${kind}:${time}`;
  }

  /** Where a trigger's result waits for the operator who asked. */
  triggerResult(id: string): string {
    return `${this.prefix}:trigger:${id}`;
  }
}
