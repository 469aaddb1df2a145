import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import type { ChaosStore } from './chaos-store.js';

/** How often the soak looks whether the postmaster still runs (PostgreSQL is started by `pg_ctl`, not a child). */
const WATCH_MS = 500;

/**
 * The soak's own PostgreSQL cluster: `initdb` into a temp dir and a free loopback port, run as the OS user
 * `postgres` (test/support/private-postgres.ts), never the shared server on 5432. A `kill -9` takes down the
 * postmaster and every backend at once, as a crashed host would; the restart on the same port replays the
 * WAL, so every committed lock row, fencing token and job record is back (`lock_until` is an absolute
 * time on the database's clock, so expiries keep running meanwhile). Committed transactions survive the
 * kill: the WAL is written to the OS at every commit (the cluster runs with `fsync=off`, which only matters
 * when the machine itself goes down).
 */
export class ChaosPostgres implements ChaosStore {
  readonly kind = 'postgres';
  private running: number | undefined;
  private readonly watcher: NodeJS.Timeout;

  private constructor(
    private readonly server: PrivatePostgres,
    private readonly onUnexpectedExit: (pid: number) => void,
  ) {
    this.watcher = setInterval(() => this.watch(), WATCH_MS);
    this.watcher.unref();
  }

  static async start(onUnexpectedExit: (pid: number) => void): Promise<ChaosPostgres> {
    const server = await startPrivatePostgres();
    const store = new ChaosPostgres(server, onUnexpectedExit);
    store.running = await server.pid();
    return store;
  }

  get port(): number {
    return this.server.port;
  }

  get pid(): number | undefined {
    return this.running;
  }

  get description(): string {
    return `PostgreSQL on port ${this.port} (a private cluster, database postgres)`;
  }

  urlThrough(port: number): string {
    return `postgres://postgres@127.0.0.1:${port}/postgres`;
  }

  async kill(): Promise<void> {
    this.running = undefined;
    await this.server.stop('SIGKILL');
  }

  async restart(): Promise<void> {
    if (this.running !== undefined) throw new Error(`PostgreSQL ${this.running} on port ${this.port} still runs`);
    await this.server.start();
    this.running = await this.server.pid();
  }

  pause(): Promise<void> {
    return this.server.pause();
  }

  resume(): Promise<void> {
    return this.server.resume();
  }

  async stop(): Promise<void> {
    clearInterval(this.watcher);
    this.running = undefined;
    await this.server.remove();
  }

  private watch(): void {
    const pid = this.running;
    if (pid === undefined) return;
    try {
      process.kill(pid, 0);
    } catch {
      this.running = undefined;
      this.onUnexpectedExit(pid);
    }
  }
}
