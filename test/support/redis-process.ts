import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis, type RedisOptions } from 'ioredis';

/** A `redis-server` process (a plain server, a Cluster node or a Sentinel) a test started. */
export interface RedisProcess {
  readonly pid: number;
  /** Settles when the process has exited, for whatever reason. */
  readonly exited: Promise<void>;
  /** SIGKILLs the process by PID and waits for it to exit; later calls do nothing. */
  kill(): Promise<void>;
  /** Lets this Node process exit while the server runs on: for a server the run's teardown stops by PID. */
  unref(): void;
}

/**
 * Arguments of a `redis-server` on loopback `port` that saves nothing, working in `dir`: a server must
 * not share a working directory, where a replica stores the RDB it receives and any server loads a
 * `dump.rdb` it finds at startup.
 */
export function ephemeralServerArgs(port: number, dir: string): string[] {
  return ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir];
}

/**
 * Spawns `redis-server <args>` and waits until it answers PING on `port`. If it never does, the
 * process is killed before the rejection, so a failed start leaves nothing running. A `launcher`
 * (for example `valgrind --tool=callgrind`) runs the server under it; `pid` is then the launcher's,
 * which for valgrind is the server's own. `probe` is how the PING connects to a server that needs a
 * password or TLS.
 */
export async function spawnRedisProcess(
  args: readonly string[],
  port: number,
  launcher: readonly string[] = [],
  probe: RedisOptions = {},
): Promise<RedisProcess> {
  const [command, ...launcherArgs] = [...launcher, 'redis-server'];
  const child = spawn(command, [...launcherArgs, ...args], { stdio: 'ignore' });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const started: RedisProcess = {
    pid: child.pid!,
    exited,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    unref: () => child.unref(),
  };
  try {
    await waitUntilReady(port, probe);
  } catch (error) {
    await started.kill();
    throw error;
  }
  return started;
}

/** A {@link RedisProcess} with a temp dir of its own. */
export interface RedisProcessInTempDir extends RedisProcess {
  readonly dir: string;
}

/**
 * {@link spawnRedisProcess} in a fresh temp dir of its own, for a process that writes files (a Cluster
 * node's `nodes.conf`, a Sentinel's rewritten config, a replica's RDB, a profiler's output): `args`
 * and `launcher` get the dir, and `args` may prepare files in it. `kill()` also removes the dir, as
 * does a failed start.
 */
export async function spawnRedisProcessInTempDir(
  port: number,
  args: (dir: string) => readonly string[] | Promise<readonly string[]>,
  launcher: (dir: string) => readonly string[] = () => [],
  probe: RedisOptions = {},
): Promise<RedisProcessInTempDir> {
  const dir = await mkdtemp(join(tmpdir(), `nsl-redis-${port}-`));
  const removeDir = () => rm(dir, { recursive: true, force: true });
  let running: RedisProcess;
  try {
    running = await spawnRedisProcess(await args(dir), port, launcher(dir), probe);
  } catch (error) {
    await removeDir();
    throw error;
  }
  return {
    pid: running.pid,
    exited: running.exited,
    unref: () => running.unref(),
    dir,
    async kill() {
      await running.kill();
      await removeDir();
    },
  };
}

/** Polls `port` with PING (connecting with `options`) until a server answers, or rejects after `timeoutMs`. */
async function waitUntilReady(port: number, options: RedisOptions, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis({
      ...options,
      port,
      host: '127.0.0.1',
      lazyConnect: true,
      maxRetriesPerRequest: 0,
      retryStrategy: () => null,
    });
    probe.on('error', () => undefined); // refused while the server starts; the loop retries
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start: ${String(error)}`);
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
