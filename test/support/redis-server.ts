import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { RedisOptions } from 'ioredis';
import {
  ephemeralServerArgs,
  spawnRedisProcess,
  spawnRedisProcessInTempDir,
  type RedisProcess,
} from './redis-process.js';

/** A `redis-server` this test started on its own port, so it may stop, kill or restart it. */
export interface PrivateRedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>`, `rediss://` for a TLS server; never with the password. */
  readonly url: string;
  /** What a client of the default user needs besides `url`: its password and, for TLS, the CA to trust. */
  readonly clientOptions: RedisOptions;
  /** The PID of the running `redis-server`; undefined while it is stopped. */
  readonly pid: number | undefined;
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
  /** The default user's password (`--requirepass`). */
  readonly requirepass?: string;
  /** Serve TLS only (`--port 0 --tls-port <port>`), with this certificate; clients need no certificate. */
  readonly tls?: RedisTlsFiles;
}

/** PEM files of a TLS server: its certificate and key, and the CA that signed it. */
export interface RedisTlsFiles {
  readonly certFile: string;
  readonly keyFile: string;
  readonly caFile: string;
}

/** `redis-server` arguments serving TLS only on `port`, with `tls`'s files. */
function tlsServerArgs(port: number, tls: RedisTlsFiles): string[] {
  return [
    ...['--port', '0', '--tls-port', String(port), '--tls-auth-clients', 'no'],
    ...['--tls-cert-file', tls.certFile, '--tls-key-file', tls.keyFile, '--tls-ca-cert-file', tls.caFile],
  ];
}

/**
 * Starts a throw-away `redis-server` (no persistence) on a free port. Never use the shared server on
 * 6379 for a test that stops, kills or reconfigures Redis.
 */
export async function startPrivateRedisServer(options: PrivateRedisServerOptions = {}): Promise<PrivateRedisServer> {
  const port = await freePort();
  const replicaArgs = options.replicaOf === undefined ? [] : ['--replicaof', '127.0.0.1', String(options.replicaOf)];
  // Later arguments win: a TLS server's `--port 0` replaces the plain port.
  const extraArgs = [
    ...replicaArgs,
    ...(options.requirepass === undefined ? [] : ['--requirepass', options.requirepass]),
    ...(options.tls ? tlsServerArgs(port, options.tls) : []),
  ];
  const clientOptions: RedisOptions = {
    password: options.requirepass,
    tls: options.tls && { ca: await readFile(options.tls.caFile) },
  };
  // A persistent server's files outlive each process, so a restart finds them.
  const dataDir = options.persistent ? await mkdtemp(join(tmpdir(), `nsl-redis-${port}-aof-`)) : undefined;
  let running: RedisProcess | undefined;
  const server: PrivateRedisServer = {
    port,
    url: `${options.tls ? 'rediss' : 'redis'}://127.0.0.1:${port}`,
    clientOptions,
    get pid() {
      return running?.pid;
    },
    async start() {
      const persistence = ['--appendonly', 'yes', '--appendfsync', 'always'];
      running = dataDir
        ? await spawnRedisProcess(
            [...ephemeralServerArgs(port, dataDir), ...persistence, ...extraArgs],
            port,
            [],
            clientOptions,
          )
        : await spawnRedisProcessInTempDir(
            port,
            (dir) => [...ephemeralServerArgs(port, dir), ...extraArgs],
            () => [],
            clientOptions,
          );
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
