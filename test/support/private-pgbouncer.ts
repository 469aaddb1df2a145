import { execFile } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { isAlive, signalIfAlive } from './private-postgres.js';
import { freePort } from './redis-server.js';
import { SHARED_POSTGRES } from './shared-postgres.js';

const run = promisify(execFile);
const BIN = process.env.PGBOUNCER_BIN ?? '/usr/sbin/pgbouncer';

/** A PgBouncer this test started on its own port, in front of the shared PostgreSQL. */
export interface PrivatePgBouncer {
  readonly port: number;
  /** Stops it by its PID and removes its files. */
  remove(): Promise<void>;
}

/**
 * Debian's `pgbouncer` (as the OS user `postgres`: it refuses to run as root) on a free loopback port, in
 * transaction mode with `serverConnections` server connections, in front of the shared PostgreSQL's database.
 */
export async function startPrivatePgBouncer(serverConnections = 2): Promise<PrivatePgBouncer> {
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
      `pidfile = ${pidFile}`,
      `logfile = ${join(dir, 'pgbouncer.log')}`,
      '',
    ].join('\n'),
    { mode: 0o644 },
  );
  const asRoot = process.getuid?.() === 0;
  const daemon = [BIN, '-d', '-q', config];
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
    async remove() {
      signalIfAlive(pid, 'SIGTERM');
      while (isAlive(pid)) await new Promise((resolve) => setTimeout(resolve, 20));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
