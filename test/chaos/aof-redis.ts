import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnRedisProcess, type RedisProcess } from '../support/redis-process.js';
import { freePort } from '../support/redis-server.js';
import type { ChaosStore } from './chaos-store.js';

/**
 * The soak's own `redis-server`: a free loopback port, a temp dir of its own, and an append-only file
 * fsynced on every write, so a `kill -9` loses nothing it acknowledged and a restart on the same port
 * and dir comes back with every lock, fence counter and job record (TTLs keep running meanwhile: Redis
 * stores absolute expiry times). Never the shared server on 6379.
 */
export class AofRedisServer implements ChaosStore {
  readonly kind = 'redis';
  private running: RedisProcess | undefined;
  private paused = false;

  private constructor(
    readonly port: number,
    readonly dir: string,
    private readonly onUnexpectedExit: (pid: number) => void,
  ) {}

  /** Starts the server; `onUnexpectedExit` is told when it exits other than through {@link kill} / {@link stop}. */
  static async start(onUnexpectedExit: (pid: number) => void): Promise<AofRedisServer> {
    const server = new AofRedisServer(
      await freePort(),
      await mkdtemp(join(tmpdir(), 'nsl-chaos-redis-')),
      onUnexpectedExit,
    );
    try {
      await server.launch();
    } catch (error) {
      await rm(server.dir, { recursive: true, force: true });
      throw error;
    }
    return server;
  }

  get description(): string {
    return `Redis on port ${this.port} (AOF in ${this.dir})`;
  }

  urlThrough(port: number): string {
    return `redis://127.0.0.1:${port}`;
  }

  /** The running server's PID, `undefined` while it is down. */
  get pid(): number | undefined {
    return this.running?.pid;
  }

  /** `kill -9` by PID; resolves once it has exited. */
  async kill(): Promise<void> {
    const stopping = this.running;
    this.running = undefined;
    this.paused = false;
    await stopping?.kill();
  }

  /** Starts the server again on the same port, from its AOF; resolves once it answers PING. */
  async restart(): Promise<void> {
    if (this.running) throw new Error(`redis-server ${this.running.pid} on port ${this.port} is still running`);
    await this.launch();
  }

  /** SIGSTOP: the server keeps its connections but answers nothing, and its clock jumps on {@link resume}. */
  async pause(): Promise<void> {
    if (!this.running) throw new Error(`no redis-server runs on port ${this.port} to pause`);
    process.kill(this.running.pid, 'SIGSTOP');
    this.paused = true;
  }

  /** SIGCONT. */
  async resume(): Promise<void> {
    if (this.running && this.paused) process.kill(this.running.pid, 'SIGCONT');
    this.paused = false;
  }

  /** Kills the server (a stopped one too: SIGKILL needs no SIGCONT) and removes its dir. */
  async stop(): Promise<void> {
    await this.kill();
    await rm(this.dir, { recursive: true, force: true });
  }

  private async launch(): Promise<void> {
    const args = ['--port', String(this.port), '--bind', '127.0.0.1', '--dir', this.dir, '--save', ''];
    const aof = ['--appendonly', 'yes', '--appendfsync', 'always'];
    const started = await spawnRedisProcess([...args, ...aof], this.port);
    this.running = started;
    void started.exited.then(() => {
      if (this.running === started) {
        this.running = undefined;
        this.onUnexpectedExit(started.pid);
      }
    });
  }
}
