import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ephemeralServerArgs, spawnRedisProcess, spawnRedisProcessInTempDir, type RedisProcess } from './redis-process.js';

/** A `redis-server` this test started on its own port, so it may stop, kill or restart it. */
export interface PrivateRedisServer {
  readonly port: number;
  readonly url: string;
  /** Starts the server (again) on the same port and waits until it answers PING. */
  start(): Promise<void>;
  /** SIGKILLs the server by PID and waits for it to exit; a persistent server keeps its data for `start()`. */
  kill(): Promise<void>;
  /** Kills the server and removes its files. */
  stop(): Promise<void>;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** Options of {@link startPrivateRedisServer}. */
export interface PrivateRedisServerOptions {
  /** Start as a replica of the server on this loopback port. */
  readonly replicaOf?: number;
  /**
   * Keep every acknowledged write across `kill()` and `start()`: an append-only file synced on every
   * write (`appendfsync always`), as a production server that must survive a crash.
   */
  readonly persistent?: boolean;
}

/**
 * Starts a throw-away `redis-server` (no persistence) on a free port. Never use the shared server on
 * 6379 for a test that stops, kills or reconfigures Redis.
 */
export async function startPrivateRedisServer(options: PrivateRedisServerOptions = {}): Promise<PrivateRedisServer> {
  const port = await freePort();
  const replicaArgs = options.replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(options.replicaOf)];
  // A persistent server's files outlive each process, so a restart finds them.
  const dataDir = options.persistent ? await mkdtemp(join(tmpdir(), `nsl-redis-${port}-aof-`)) : undefined;
  let running: RedisProcess | undefined;
  const server: PrivateRedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      running = dataDir
        ? await spawnRedisProcess([...ephemeralServerArgs(port, dataDir), '--appendonly', 'yes', '--appendfsync', 'always', ...replicaArgs], port)
        : await spawnRedisProcessInTempDir(port, (dir) => [...ephemeralServerArgs(port, dir), ...replicaArgs]);
    },
    async kill() {
      const stopping = running;
      running = undefined;
      await stopping?.kill();
    },
    async stop() {
      await server.kill();
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}
