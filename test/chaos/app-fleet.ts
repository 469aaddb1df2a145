import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { spawnJsonLinesProcess, type JsonLinesProcess } from '../support/json-lines-process.js';
import { faketimeEnv } from './faketime.js';
import type { ChaosStore } from './chaos-store.js';
import { FaultProxy } from './fault-proxy.js';
import type { AppLine, RunLogLine } from './journal.js';
import { monoNow } from './mono-clock.js';

const APP_SCRIPT = fileURLToPath(new URL('./app/chaos-app.js', import.meta.url));
const PACKAGE_BUILD = fileURLToPath(new URL('../../../dist/cjs/index.js', import.meta.url));
/** A Nest app booting on a busy 2-core machine. */
const READY_TIMEOUT_MS = 30_000;

/** One app of the fleet: its name and its wall-clock skew. */
export interface AppSpec {
  readonly node: string;
  readonly skewMs: number;
}

export interface AppFleetOptions {
  readonly apps: readonly AppSpec[];
  /** libfaketime's preload library. */
  readonly libfaketime: string;
  /** The store the apps lock in, each through its own proxy. */
  readonly store: ChaosStore;
  readonly keyPrefix: string;
  /** Receives every journal line of every app, and the fleet's own records (starts, exits). */
  readonly record: (line: RunLogLine) => void;
  /** Told, with the app's last output, when an app exits without having been killed. */
  readonly onUnexpectedExit: (node: string, description: string) => void;
}

/**
 * The soak's app processes, each under libfaketime with its own skew and connected to the store through
 * its own {@link FaultProxy}. An app keeps its name and proxy across restarts. Every process it starts
 * it stops by PID.
 */
export class AppFleet {
  private readonly running = new Map<string, JsonLinesProcess>();
  /** The app whose journal last said it began a term of the soak's election, until it said the term ended. */
  private leading: string | undefined;

  private constructor(
    private readonly options: AppFleetOptions,
    private readonly proxies: ReadonlyMap<string, FaultProxy>,
  ) {}

  /** Opens one proxy per app. No app runs yet: {@link launch} each. */
  static async open(options: AppFleetOptions): Promise<AppFleet> {
    if (!existsSync(PACKAGE_BUILD) || !existsSync(APP_SCRIPT)) {
      throw new Error(
        `The package or the chaos app is not built (${PACKAGE_BUILD}, ${APP_SCRIPT}): ` +
          'run `npm run build && npm run build:run`',
      );
    }
    const proxies = new Map<string, FaultProxy>();
    for (const { node } of options.apps) proxies.set(node, await FaultProxy.start(options.store.port));
    return new AppFleet(options, proxies);
  }

  get nodes(): string[] {
    return this.options.apps.map(({ node }) => node);
  }

  /** The app that leads the soak's election, as its journal says; `undefined` between two terms. */
  get leader(): string | undefined {
    return this.leading;
  }

  proxy(node: string): FaultProxy {
    const proxy = this.proxies.get(node);
    if (!proxy) throw new Error(`No app "${node}" in the fleet`);
    return proxy;
  }

  /** Starts `node`'s process; resolves once it journaled `ready` (its jobs are scheduled). */
  async launch(node: string): Promise<void> {
    if (this.running.has(node)) throw new Error(`App "${node}" is already running`);
    const spec = this.options.apps.find((app) => app.node === node)!;
    let markReady!: () => void;
    let failReady!: (error: Error) => void;
    const ready = new Promise<void>((resolve, reject) => {
      markReady = resolve;
      failReady = reject;
    });
    const child = spawnJsonLinesProcess<AppLine>({
      script: APP_SCRIPT,
      env: {
        NO_COLOR: '1',
        CHAOS_NODE: node,
        CHAOS_STORE: this.options.store.kind,
        CHAOS_STORE_URL: this.options.store.urlThrough(this.proxy(node).port),
        CHAOS_KEY_PREFIX: this.options.keyPrefix,
        ...faketimeEnv(this.options.libfaketime, spec.skewMs),
      },
      onMessage: (line) => {
        this.options.record(line);
        if (line.type === 'ready') markReady();
        if (line.type === 'lead-start') this.leading = node;
        if (line.type === 'lead-end' && this.leading === node) this.leading = undefined;
      },
      onUnexpectedExit: (description) => {
        this.running.delete(node);
        this.options.record({ type: 'app-exit', node, pid: child.pid, mono: monoNow(), expected: false, description });
        this.options.onUnexpectedExit(node, description);
        failReady(new Error(`App "${node}" exited before it was ready: ${description}`));
      },
    });
    this.running.set(node, child);
    const mono = monoNow();
    this.options.record({ type: 'app-started', node, pid: child.pid, mono, wallMinusMono: Date.now() - mono });
    const timeout = setTimeout(
      () =>
        failReady(
          new Error(`App "${node}" (pid ${child.pid}) not ready after ${READY_TIMEOUT_MS} ms:\n${child.diagnostics()}`),
        ),
      READY_TIMEOUT_MS,
    );
    try {
      await ready;
    } finally {
      clearTimeout(timeout);
    }
  }

  /** `kill -9` of `node` by PID; resolves with the monotonic time the signal was sent, once it is gone. */
  async kill(node: string): Promise<number> {
    const child = this.running.get(node);
    if (!child) throw new Error(`App "${node}" is not running`);
    this.running.delete(node);
    if (this.leading === node) this.leading = undefined;
    const mono = monoNow();
    this.options.record({ type: 'app-exit', node, pid: child.pid, mono, expected: true });
    await child.kill();
    return mono;
  }

  /** Kills every app still running and closes the proxies. */
  async stop(): Promise<void> {
    await Promise.all([...this.running.keys()].map((node) => this.kill(node)));
    await Promise.all([...this.proxies.values()].map((proxy) => proxy.close()));
  }
}
