import { execFile } from 'node:child_process';
import { chmod, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { madeOncePerRun, runDir } from './made-once-per-run.js';
import { freePort } from './redis-server.js';

const run = promisify(execFile);
const BIN = process.env.PG_BIN ?? '/usr/lib/postgresql/15/bin';

/** A PostgreSQL cluster this test started on its own port, so it may stop, kill, pause or restart it. */
export interface PrivatePostgres {
  readonly port: number;
  /** The postmaster's PID, from its pid file (rejects while the server is down). */
  pid(): Promise<number>;
  /** Starts the server (again) on the same port, with the same data, and waits until it accepts connections. */
  start(): Promise<void>;
  /** Stops the server by its PID: `SIGINT` (fast shutdown) or `SIGKILL`, and waits until it is gone. */
  stop(signal?: 'SIGINT' | 'SIGKILL'): Promise<void>;
  /** `SIGSTOP`s the server and every backend of it (a frozen host); `resume()` sends `SIGCONT`. */
  pause(): Promise<void>;
  resume(): Promise<void>;
  /** Stops the server and removes its files. */
  remove(): Promise<void>;
}

/** Runs `command` as the OS user `postgres`: the server refuses to run as root. */
function asPostgres(command: string, args: string[]) {
  const asRoot = process.getuid?.() === 0;
  return asRoot ? run('runuser', ['-u', 'postgres', '--', command, ...args]) : run(command, args);
}

/** `initdb` of a data dir of user `postgres`, with the `auth` flags. */
function initdb(data: string, auth: readonly string[]) {
  return asPostgres(join(BIN, 'initdb'), ['-D', data, '-U', 'postgres', ...auth, '-E', 'UTF8', '--no-sync']);
}

/**
 * A trust-auth data dir at `data`: a copy (`cp -a`, about a tenth of initdb's time) of the run's template, which
 * the first spec of a Jest run initdb's under the run's dir; outside Jest (the chaos soak) an initdb of its own.
 */
async function trustDataDir(data: string): Promise<void> {
  const dir = runDir();
  if (dir === undefined) return void (await initdb(data, ['--auth=trust']));
  const template = await madeOncePerRun('postgres-template', async () => {
    const templateDir = join(dir, 'postgres-template');
    await mkdir(templateDir);
    await chmod(templateDir, 0o777);
    await initdb(join(templateDir, 'data'), ['--auth=trust']);
    return { value: join(templateDir, 'data'), pids: [], dirs: [] };
  });
  await run('cp', ['-a', template, data]);
}

/** Options of {@link startPrivatePostgres}. */
export interface PrivatePostgresOptions {
  /** A SCRAM password every TCP connection must give; trust auth without it. */
  readonly password?: string;
  /** Libraries the server loads at start (`shared_preload_libraries`), e.g. `pg_stat_statements`. */
  readonly preload?: readonly string[];
}

/**
 * A data dir in a temp dir (user `postgres`; trust auth, copied from the run's template, or with `password` a
 * SCRAM password that every TCP connection must give), then started on a free loopback port.
 */
export async function startPrivatePostgres(options: PrivatePostgresOptions = {}): Promise<PrivatePostgres> {
  const dir = await mkdtemp(join(tmpdir(), 'nsl-pg-'));
  await chmod(dir, 0o777);
  const data = join(dir, 'data');
  if (options.password === undefined) await trustDataDir(data);
  else {
    const passwordFile = join(dir, 'password');
    await writeFile(passwordFile, `${options.password}\n`, { mode: 0o644 });
    await initdb(data, ['--auth-local=trust', '--auth-host=scram-sha-256', `--pwfile=${passwordFile}`]);
  }
  const port = await freePort();
  const preload = options.preload?.length ? ` -c shared_preload_libraries=${options.preload.join(',')}` : '';
  const serverOptions = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off${preload}`;
  const pidOf = async () => Number((await readFile(join(data, 'postmaster.pid'), 'utf8')).split('\n')[0]);
  /** The server's processes: the postmaster and its children. */
  const processes = async () => {
    const pid = await pidOf();
    const { stdout } = await run('pgrep', ['-P', String(pid)]).catch(() => ({ stdout: '' }));
    return [pid, ...stdout.split('\n').filter(Boolean).map(Number)];
  };
  const server: PrivatePostgres = {
    port,
    pid: pidOf,
    async start() {
      await asPostgres(join(BIN, 'pg_ctl'), ['-D', data, '-o', serverOptions, '-l', join(dir, 'log'), '-w', 'start']);
    },
    async stop(signal = 'SIGINT') {
      const pids = await processes().catch(() => []);
      // A fast shutdown is the postmaster's to do; a crash takes every process of the server down at once.
      for (const pid of signal === 'SIGKILL' ? pids : pids.slice(0, 1)) signalIfAlive(pid, signal);
      while (pids.some(isAlive)) await new Promise((resolve) => setTimeout(resolve, 20));
      // After SIGKILL the children outlive the postmaster for a moment, and the pid file stays.
      if (signal === 'SIGKILL') await rm(join(data, 'postmaster.pid'), { force: true });
    },
    async pause() {
      for (const pid of await processes()) signalIfAlive(pid, 'SIGSTOP');
    },
    async resume() {
      for (const pid of await processes()) signalIfAlive(pid, 'SIGCONT');
    },
    async remove() {
      await server.resume().catch(() => undefined);
      await server.stop('SIGINT');
      await rm(dir, { recursive: true, force: true });
    },
  };
  await server.start();
  return server;
}

/** Sends `signal` to `pid`; a process that exited since it was listed (a backend whose client left) is none. */
export function signalIfAlive(pid: number, signal: NodeJS.Signals): void {
  try {
    process.kill(pid, signal);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
