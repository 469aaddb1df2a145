import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnJsonLinesProcess, type JsonLinesProcess } from '../../test/support/json-lines-process.js';
import type { MemorySample, NodeMessage, NodeMode, ReportMessage } from './node-messages.js';

const NODE_SCRIPT = fileURLToPath(new URL('./scale-node.js', import.meta.url));
const PACKAGE_BUILD = fileURLToPath(new URL('../../../dist/cjs/index.js', import.meta.url));
/** Twenty Nest apps adding thousands of jobs on a busy 2-core machine. */
const READY_TIMEOUT_MS = 180_000;
/** A report of 5,000 jobs over a couple of minutes is a line of about a megabyte. */
const REPORT_TIMEOUT_MS = 60_000;
/** Nodes booting at once: more only queue on the two cores. */
const BOOT_CONCURRENCY = 4;

export interface FleetOptions {
  readonly mode: NodeMode;
  readonly nodes: number;
  readonly jobs: number;
  readonly store: 'redis' | 'postgres';
  readonly storeUrl: string;
  readonly keyPrefix: string;
  /** The jobs' cron expression; every second when unset. */
  readonly cron?: string;
  /** How late a tick may be and still run, ms; cron's 250 when unset. */
  readonly lateTickThresholdMs?: number;
}

/** One node: its process and what it reported. */
interface FleetNode {
  readonly name: string;
  readonly process: JsonLinesProcess;
  readonly ready: Promise<MemorySample>;
  /** The next report it sends. */
  nextReport: Deferred<ReportMessage>;
}

interface Deferred<T> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
  reject(error: Error): void;
}

function deferred<T>(): Deferred<T> {
  let resolve!: (value: T) => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<T>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  promise.catch(() => undefined); // observed by whoever awaits it; an unawaited failure is not a crash
  return { promise, resolve, reject };
}

function withTimeout<T>(promise: Promise<T>, ms: number, what: () => string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(what())), ms);
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/**
 * The node processes of one phase of the scale bench, all in one mode, started from the built bench
 * (`.build/bench/scale/scale-node.js`) and the built package. Every process it starts it stops by PID.
 */
export class ScaleFleet {
  private constructor(private readonly nodes: readonly FleetNode[]) {}

  /**
   * Starts the nodes, a few at a time, and resolves once every one has started its jobs, with each
   * node's memory before it added them. If one fails to start, all are killed and the error says why.
   */
  static async start(options: FleetOptions): Promise<{ fleet: ScaleFleet; emptyMemory: MemorySample[] }> {
    if (!existsSync(PACKAGE_BUILD) || !existsSync(NODE_SCRIPT)) {
      throw new Error(
        `The package or the scale node is not built (${PACKAGE_BUILD}, ${NODE_SCRIPT}): run \`npm run build && npm run build:run\``,
      );
    }
    const nodes: FleetNode[] = [];
    const fleet = new ScaleFleet(nodes);
    try {
      const emptyMemory: MemorySample[] = [];
      for (let first = 0; first < options.nodes; first += BOOT_CONCURRENCY) {
        const batch = Array.from({ length: Math.min(BOOT_CONCURRENCY, options.nodes - first) }, (_, i) => {
          const node = launchNode(`${options.mode}-${first + i + 1}`, options);
          nodes.push(node);
          return withTimeout(
            node.ready,
            READY_TIMEOUT_MS,
            () =>
              `node ${node.name} (pid ${node.process.pid}) not ready after ${READY_TIMEOUT_MS} ms:\n${node.process.diagnostics()}`,
          );
        });
        emptyMemory.push(...(await Promise.all(batch)));
      }
      return { fleet, emptyMemory };
    } catch (error) {
      await fleet.stop();
      throw error;
    }
  }

  /** Asks every node for its report (SIGUSR2) and waits for all of them. */
  async reports(): Promise<ReportMessage[]> {
    return Promise.all(
      this.nodes.map((node) => {
        node.nextReport = deferred();
        process.kill(node.process.pid, 'SIGUSR2');
        return withTimeout(
          node.nextReport.promise,
          REPORT_TIMEOUT_MS,
          () => `node ${node.name} sent no report in ${REPORT_TIMEOUT_MS} ms`,
        );
      }),
    );
  }

  /** Kills every node by PID and waits until all are gone. */
  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((node) => node.process.kill()));
  }
}

function launchNode(name: string, options: FleetOptions): FleetNode {
  const ready = deferred<MemorySample>();
  const node: FleetNode = {
    name,
    ready: ready.promise,
    nextReport: deferred(),
    process: spawnJsonLinesProcess<NodeMessage>({
      script: NODE_SCRIPT,
      nodeArgs: ['--expose-gc'],
      env: {
        NO_COLOR: '1',
        BENCH_NODE: name,
        BENCH_MODE: options.mode,
        BENCH_JOBS: String(options.jobs),
        BENCH_STORE: options.store,
        BENCH_STORE_URL: options.storeUrl,
        BENCH_KEY_PREFIX: options.keyPrefix,
        ...(options.cron === undefined ? {} : { BENCH_CRON: options.cron }),
        ...(options.lateTickThresholdMs === undefined
          ? {}
          : { BENCH_CRON_THRESHOLD: String(options.lateTickThresholdMs) }),
      },
      onMessage: (message) => {
        if (message.type === 'ready') ready.resolve(message.emptyMemory);
        else node.nextReport.resolve(message);
      },
      onUnexpectedExit: (description) => {
        const error = new Error(`node ${name} exited: ${description}`);
        ready.reject(error);
        node.nextReport.reject(error);
      },
    }),
  };
  return node;
}
