import { Injectable } from '@nestjs/common';
import { Cron, CronExpression, Interval } from '@nestjs/schedule';
import { currentLock, parseDuration, SchedulerLock, type SchedulerLockModuleOptions } from '../../../lib/index.js';
import { type LockProvider } from '../../../lib/provider/index.js';
import { ClusterAdmin, type OperatorProvider } from '../../../lib/provider/index.js';
import { useSharedRedisPrefix, type SharedRedisPrefix } from '../../support/redis-prefix.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../../support/scheduler-app.js';
import { setByHooks, type HookValues } from '../../support/set-by-hooks.js';
import { SHARED_REDIS_URL } from '../../support/shared-redis.js';
import { Operator, runCliInProcess } from './run-cli.js';
import { deferred, waitUntil, type Deferred } from '../../support/wait-until.js';
import { RedisLockProvider, type RedisClient } from '../../../lib/providers/redis/index.js';

/** The apps' `heartbeatInterval`, and the CLI's `--heartbeat`. */
export const HEARTBEAT = '200ms';
/** The keepAlive lease of `noon`: its lock is renewed every third of it. */
export const NOON_LEASE_MS = 600;
/** When `noon` fires: never during a test, so it runs only when triggered. */
export const NOON = { cron: '0 0 12 * * *', timeZone: 'Asia/Tokyo', lockName: 'reports.noon' } as const;

/** The jobs of {@link OperatedJobs}, in the CLI's order (by name). */
export const JOB_NAMES = ['noon', 'report', 'sweep'];

/** A run of a gated job, seen from inside. */
export interface GatedRun {
  readonly job: string;
  readonly node: string;
  readonly signal: AbortSignal;
}

/**
 * What the jobs of {@link OperatedJobs} do, shared by every node of a test: each run is recorded; a job can be
 * held in flight (until opened, or until its lock is lost) or made to fail.
 */
export class RunGate {
  readonly runs: GatedRun[] = [];
  private readonly held = new Map<string, Deferred>();
  private readonly failures = new Map<string, string>();

  /** Holds the job's next runs in flight until {@link open}. */
  hold(job: string): void {
    this.held.set(job, deferred());
  }

  open(job: string): void {
    this.held.get(job)?.resolve();
    this.held.delete(job);
  }

  /** Opens every held job, so that no app waits for a held run when it closes. */
  openAll(): void {
    for (const job of [...this.held.keys()]) this.open(job);
  }

  /** The job's next run throws `message`. */
  failNext(job: string, message: string): void {
    this.failures.set(job, message);
  }

  /** A run of `job`: the job's handler. */
  async pass(job: string): Promise<void> {
    const { node, signal } = currentLock()!;
    this.runs.push({ job, node, signal });
    const failure = this.failures.get(job);
    this.failures.delete(job);
    if (failure !== undefined) throw new Error(failure);
    const gate = this.held.get(job);
    if (gate)
      await new Promise((resolve) => {
        void gate.promise.then(resolve);
        signal.addEventListener('abort', resolve, { once: true });
      });
  }
}

/** One job of each kind, as an app has them. */
@Injectable()
export class OperatedJobs {
  constructor(private readonly gate: RunGate) {}

  /** Every second, once per occurrence cluster-wide. */
  @SchedulerLock()
  @Cron(CronExpression.EVERY_SECOND, { name: 'report' })
  report() {
    return this.gate.pass('report');
  }

  /** Never due during a test; renews its lock every NOON_LEASE_MS / 3 while it runs. A lock named apart from the job. */
  @SchedulerLock({ name: NOON.lockName, keepAlive: { lease: NOON_LEASE_MS } })
  @Cron(NOON.cron, { name: 'noon', timeZone: NOON.timeZone })
  noon() {
    return this.gate.pass('noon');
  }

  /** Hourly: not due during a test. */
  @SchedulerLock()
  @Interval('sweep', 3_600_000)
  sweep() {
    return this.gate.pass('sweep');
  }
}

/**
 * An app (a node named `node`) running {@link OperatedJobs} on `store`: a Redis under `keyPrefix`, or a
 * provider of its own (PostgreSQL).
 */
export function startOperatedApp(
  node: string,
  gate: RunGate,
  store: { redis: SchedulerLockModuleOptions['redis']; keyPrefix: string } | { provider: LockProvider },
): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: { ...store, node, heartbeatInterval: HEARTBEAT, defaultLockAtMostFor: '10s' },
    providers: [OperatedJobs, { provide: RunGate, useValue: gate }],
  });
}

/** The operator store of a Redis under `keyPrefix`, for {@link waitForNodes}. */
export function redisOperatorProvider(client: RedisClient, keyPrefix: string): OperatorProvider {
  return new RedisLockProvider(client, { keyPrefix }).operatorProvider();
}

/** Waits until exactly `nodes` are live in `store` and have published their jobs (the CLI sees them). */
export async function waitForNodes(store: OperatorProvider, nodes: readonly string[]): Promise<void> {
  const admin = new ClusterAdmin(store, parseDuration(HEARTBEAT));
  const expected = [...nodes].sort().join(', ');
  await waitUntil(async () => {
    const live = await admin.listNodes();
    const published = live.every((node) => [...node.jobs].sort().join() === JOB_NAMES.join());
    return published && live.map((node) => node.node).join(', ') === expected;
  }, `the live nodes are ${expected}, each with its jobs`);
}

/** What {@link useOperatedCluster} gives a spec: set by its hooks, so read inside tests and hooks only. */
export interface OperatedCluster {
  /** Holds the jobs' runs until the test opens it; opened before the apps close. */
  readonly gate: RunGate;
  /** The CLI, run in this process, pointed at the spec's Redis and per-test key prefix. */
  readonly operator: Operator;
  /** The shared Redis and the test's key prefix. */
  readonly shared: SharedRedisPrefix;
  /** Starts apps named `names` and waits until each has published itself. */
  startNodes(...names: string[]): Promise<SchedulerApp[]>;
}

/**
 * Registers the hooks of a CLI spec: a per-test key prefix on the shared Redis, a fresh gate and CLI per
 * test, and the apps closed (their gate opened first) after each.
 */
export function useOperatedCluster(label: string): OperatedCluster {
  const values: HookValues<Pick<OperatedCluster, 'gate' | 'operator'>> = {};
  const shared = useSharedRedisPrefix(label, async () => {
    values.gate?.openAll();
    await closeSchedulerApps();
  });
  beforeEach(() => {
    values.gate = new RunGate();
    const connection = ['--redis', SHARED_REDIS_URL, '--prefix', shared.prefix, '--heartbeat', HEARTBEAT];
    values.operator = new Operator(connection, {}, runCliInProcess);
  });
  const hooked = setByHooks('useOperatedCluster', values, ['gate', 'operator']);
  return {
    get gate() {
      return hooked.gate;
    },
    get operator() {
      return hooked.operator;
    },
    shared,
    async startNodes(...names) {
      const store = { redis: SHARED_REDIS_URL, keyPrefix: shared.prefix };
      const apps = await Promise.all(names.map((name) => startOperatedApp(name, hooked.gate, store)));
      await waitForNodes(redisOperatorProvider(shared.client, shared.prefix), names);
      return apps;
    },
  };
}
