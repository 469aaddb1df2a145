import { existsSync, readdirSync, statSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { SHARED_POSTGRES } from '../support/shared-postgres.js';
import { SHARED_REDIS_URL } from '../support/shared-redis.js';
import { spawnJsonLinesProcess, type JsonLinesProcess } from '../support/json-lines-process.js';
import type {
  LockEventMessage,
  RunMessage,
  StartMessage,
  WorkerEnv,
  WorkerJobSpec,
  WorkerMessage,
} from './fixtures/worker-protocol.js';

const FIXTURES_SOURCE = fileURLToPath(new URL('./fixtures/', import.meta.url));
const FIXTURES_BUILD = fileURLToPath(new URL('../../.build/test/cluster/fixtures/', import.meta.url));
const PACKAGE_BUILD = fileURLToPath(new URL('../../dist/cjs/index.js', import.meta.url));
const WORKER_SCRIPT = builtFixture('worker');

/** The compiled path of `test/cluster/fixtures/<name>.ts` (built by `npm run build:run`). */
export function builtFixture(name: string): string {
  return `${FIXTURES_BUILD}${name}.js`;
}

/** One worker process to start; a plain string is an instance name with no extras. */
export interface WorkerLaunch {
  instance: string;
  /** Node options for this worker only, e.g. a `--import` preload that shifts its clock. */
  nodeArgs?: string[];
  env?: NodeJS.ProcessEnv;
}

/** What every worker of a cluster shares. */
export interface WorkerClusterOptions {
  workers: Array<string | WorkerLaunch>;
  jobs: WorkerJobSpec[];
  keyPrefix: string;
  redisUrl?: string;
  /** Lock in this schema of the shared PostgreSQL instead of Redis. */
  postgresSchema?: string;
  /** How long all workers get to report `ready`. Default 20 s (3 Nest apps starting on 2 cores). */
  readyTimeoutMs?: number;
}

interface Waiter {
  probe(): boolean;
  fail(error: Error): void;
}

/**
 * Worker processes (test/cluster/fixtures/worker.ts) running the same locked jobs on one Redis, and
 * every message they reported, in arrival order. Kill it in `afterEach`/`afterAll`.
 */
export class WorkerCluster {
  /** Every message of every worker, in arrival order. */
  readonly messages: WorkerMessage[] = [];
  /** Every line a worker logged (its stderr), in arrival order, with when it arrived (`Date.now()`). */
  readonly logLines: { instance: string; at: number; line: string }[] = [];
  private readonly processes = new Map<string, JsonLinesProcess>();
  private readonly waiters = new Set<Waiter>();

  private constructor() {}

  /** Starts the workers and resolves once each one reported `ready`; kills them all if one does not. */
  static async start(options: WorkerClusterOptions): Promise<WorkerCluster> {
    assertWorkerBuilt();
    const cluster = new WorkerCluster();
    const launches = options.workers.map((worker) => (typeof worker === 'string' ? { instance: worker } : worker));
    for (const launch of launches) cluster.launch(launch, options);
    try {
      await cluster.waitUntil(
        () =>
          launches.every(({ instance }) =>
            cluster.messages.some((m) => m.kind === 'ready' && m.instance === instance),
          ) || undefined,
        options.readyTimeoutMs ?? 20_000,
        'every worker to be ready',
      );
    } catch (error) {
      await cluster.killAll();
      throw error;
    }
    return cluster;
  }

  /** The runs of `job` that started so far, in arrival order. */
  starts(job: string): StartMessage[] {
    return this.messages.filter((m): m is StartMessage => m.kind === 'start' && m.job === job);
  }

  /** The runs of `job` that ended so far, in arrival order. */
  runs(job: string): RunMessage[] {
    return this.messages.filter((m): m is RunMessage => m.kind === 'run' && m.job === job);
  }

  /** The lock events of `lockName` on every worker, in arrival order. */
  lockEvents(lockName: string): LockEventMessage[] {
    return this.messages.filter((m): m is LockEventMessage => m.kind === 'lock-event' && m.event.lockName === lockName);
  }

  /** The first message (already received or still to come) that matches, or a rejection after `timeoutMs`. */
  waitFor<M extends WorkerMessage>(
    match: (message: WorkerMessage) => message is M,
    timeoutMs: number,
    description: string,
  ): Promise<M> {
    return this.waitUntil(() => this.messages.find(match), timeoutMs, description);
  }

  /**
   * Resolves with the first defined result of `probe`, which is tried now and after every message.
   * Rejects after `timeoutMs`, or at once when a worker dies unexpectedly, with the workers' logs.
   */
  waitUntil<T>(probe: () => T | undefined, timeoutMs: number, description: string): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const waiter: Waiter = {
        probe: () => {
          const result = probe();
          if (result === undefined) return false;
          settle();
          resolve(result);
          return true;
        },
        fail: (error) => {
          settle();
          reject(error);
        },
      };
      const timer = setTimeout(
        () => waiter.fail(new Error(`Waited ${timeoutMs} ms for ${description}, in vain.\n${this.diagnostics()}`)),
        timeoutMs,
      );
      const settle = () => {
        clearTimeout(timer);
        this.waiters.delete(waiter);
      };
      if (!waiter.probe()) this.waiters.add(waiter);
    });
  }

  /** SIGKILLs one worker by PID, as `kill -9` would, and waits until it is gone. */
  async kill(instance: string): Promise<void> {
    const worker = this.processes.get(instance);
    if (!worker) throw new Error(`No worker "${instance}" in this cluster`);
    await worker.kill();
  }

  /** SIGKILLs every worker still running. */
  async killAll(): Promise<void> {
    await Promise.all([...this.processes.values()].map((worker) => worker.kill()));
  }

  private launch({ instance, nodeArgs, env }: WorkerLaunch, options: WorkerClusterOptions): void {
    const workerEnv: WorkerEnv = {
      INSTANCE: instance,
      JOBS: JSON.stringify(options.jobs),
      ...(options.postgresSchema
        ? { POSTGRES_SCHEMA: options.postgresSchema, ...postgresEnv() }
        : { REDIS_URL: options.redisUrl ?? SHARED_REDIS_URL, KEY_PREFIX: options.keyPrefix }),
    };
    const worker = spawnJsonLinesProcess<WorkerMessage>({
      script: WORKER_SCRIPT,
      nodeArgs,
      // Nest's logs, on the worker's stderr, only serve as diagnostics: no colours, no per-tick debug lines.
      // A launch's PG* variables win over the shared PostgreSQL's: a proxy in front of it for that worker alone.
      env: { NO_COLOR: '1', NEST_LOG_LEVEL: '>=log', ...env, ...workerEnv, ...pgOverrides(env) },
      onMessage: (message) => this.receive(message),
      onStderrLine: (line) => this.logLines.push({ instance, at: Date.now(), line }),
      onUnexpectedExit: (description) => {
        for (const waiter of [...this.waiters]) waiter.fail(new Error(`Worker ${instance} died: ${description}`));
      },
    });
    this.processes.set(instance, worker);
  }

  private receive(message: WorkerMessage): void {
    this.messages.push(message);
    for (const waiter of [...this.waiters]) waiter.probe();
  }

  private diagnostics(): string {
    const counts = `${this.messages.length} messages received`;
    const logs = [...this.processes].map(
      ([instance, worker]) => `--- worker ${instance} (pid ${worker.pid}) ---\n${worker.diagnostics()}`,
    );
    return [counts, ...logs].join('\n');
  }
}

/** Fails fast, with the fix, when the worker was not compiled or is older than its source. */
function assertWorkerBuilt(): void {
  const hint = 'run `npm run build && npm run build:run` first (`npm test` does both)';
  if (!existsSync(PACKAGE_BUILD)) throw new Error(`The package is not built (${PACKAGE_BUILD} is missing): ${hint}`);
  for (const source of readdirSync(FIXTURES_SOURCE).filter((file) => file.endsWith('.ts'))) {
    const built = `${FIXTURES_BUILD}${source.replace(/\.ts$/, '.js')}`;
    if (!existsSync(built) || statSync(built).mtimeMs < statSync(`${FIXTURES_SOURCE}${source}`).mtimeMs) {
      throw new Error(`The worker fixture ${built} is missing or older than its source: ${hint}`);
    }
  }
}

/** node-postgres's environment variables for the shared PostgreSQL. */
function postgresEnv(): NodeJS.ProcessEnv {
  const { host, port, database, user } = SHARED_POSTGRES;
  return { PGHOST: host, PGPORT: String(port), PGDATABASE: database, PGUSER: user };
}

/** The `PG*` variables of a launch's own `env`. */
function pgOverrides(env: NodeJS.ProcessEnv = {}): NodeJS.ProcessEnv {
  return Object.fromEntries(Object.entries(env).filter(([name]) => name.startsWith('PG')));
}
