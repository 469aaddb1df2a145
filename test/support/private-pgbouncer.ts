import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';
import { isAlive, signalIfAlive } from './private-postgres.js';
import { freePort } from './redis-server.js';
import { SHARED_POSTGRES } from './shared-postgres.js';

const run = promisify(execFile);

/** A PgBouncer this test started on its own port, in front of the shared PostgreSQL. */
export interface PrivatePgBouncer {
  readonly port: number;
  /** The pooler's counters (its admin console's `SHOW STATS`), summed over its databases. */
  stats(): Promise<Record<string, number>>;
  /** Stops it by its PID and removes its files. */
  remove(): Promise<void>;
}

/** How to start a PgBouncer: its binary, and `max_prepared_statements` (0: none, as before 1.21). */
export interface PgBouncerSetup {
  readonly bin: string;
  readonly maxPreparedStatements: number;
}

/** The version `bin --version` prints, as `[major, minor]`. */
export async function pgBouncerVersion(bin: string): Promise<[number, number]> {
  const { stdout } = await run(bin, ['--version']);
  const match = /PgBouncer (\d+)\.(\d+)/.exec(stdout);
  if (!match) throw new Error(`${bin} --version printed no PgBouncer version: ${stdout}`);
  return [Number(match[1]), Number(match[2])];
}

/**
 * A `pgbouncer` (as the OS user `postgres`: it refuses to run as root) on a free loopback port, in
 * transaction mode with `serverConnections` server connections, in front of the shared PostgreSQL's database.
 */
export async function startPrivatePgBouncer(
  { bin, maxPreparedStatements }: PgBouncerSetup,
  serverConnections = 2,
): Promise<PrivatePgBouncer> {
  const dir = await mkdtemp(join(tmpdir(), 'nsl-pgbouncer-'));
  await chmod(dir, 0o777);
  const port = await freePort();
  const { host, port: serverPort, database, user } = SHARED_POSTGRES;
  const config = join(dir, 'pgbouncer.ini');
  const pidFile = join(dir, 'pgbouncer.pid');
  await writeFile(join(dir, 'users.txt'), `"${user}" ""\n`, { mode: 0o644 });
  await writeFile(
    config,
    [
      '[databases]',
      `${database} = host=${host} port=${serverPort} dbname=${database} user=${user} pool_size=${serverConnections}`,
      '[pgbouncer]',
      `listen_addr = 127.0.0.1`,
      `listen_port = ${port}`,
      'unix_socket_dir =',
      'auth_type = trust',
      `auth_file = ${join(dir, 'users.txt')}`,
      'pool_mode = transaction',
      ...(maxPreparedStatements > 0 ? [`max_prepared_statements = ${maxPreparedStatements}`] : []),
      `admin_users = ${user}`,
      `pidfile = ${pidFile}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const daemon = [bin, '-d', '-q', config];
  await (asRoot ? run('runuser', ['-u', 'postgres', '--', ...daemon]) : run(daemon[0], daemon.slice(1)));
  // The daemon writes its pid file once it listens.
  let pid = NaN;
  for (let tries = 0; !(pid > 0); tries++) {
    if (tries === 250)
      throw new Error(`pgbouncer did not start: ${await readFile(join(dir, 'pgbouncer.log'), 'utf8')}`);
    pid = Number(await readFile(pidFile, 'utf8').catch(() => ''));
    if (!(pid > 0)) await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return {
    port,
    async stats() {
      // The admin console speaks the simple query protocol only: a statement with no parameters.
      const admin = new pg.Client({ host: '127.0.0.1', port, user, database: 'pgbouncer' });
      await admin.connect();
      try {
        const { rows } = await admin.query<Record<string, string>>('SHOW STATS');
        const sums: Record<string, number> = {};
        for (const row of rows)
          for (const [column, value] of Object.entries(row))
            if (column !== 'database') sums[column] = (sums[column] ?? 0) + Number(value);
        return sums;
      } finally {
        await admin.end();
      }
    },
    async remove() {
      signalIfAlive(pid, 'SIGTERM');
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
