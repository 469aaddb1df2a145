import pg from 'pg';
import { Redis } from 'ioredis';
import { startPrivatePostgres } from '../../test/support/private-postgres.js';
import { startPrivateRedisServer } from '../../test/support/redis-server.js';
import { postgresStatementMeter } from '../postgres/postgres-meter.js';
import { describeEnvironment, describeMachine } from '../support/environment.js';
import { infoMeter } from './redis-meter.js';
import type { StoreMeter } from './store-meter.js';

/** The private server a scale run locks in (`--store`), started for the run and stopped by PID after it. */
export interface ScaleStore {
  readonly kind: 'redis' | 'postgres';
  /** For the tables: `Redis`, `PostgreSQL`. */
  readonly name: string;
  /** What the nodes connect to. */
  readonly url: string;
  /** The date, the machine and the server, for the report. */
  describe(): Promise<string>;
  /** Empties the server before a phase: its job records start from nothing. */
  reset(): Promise<unknown>;
  readonly meter: StoreMeter;
  stop(): Promise<void>;
}

export async function startScaleStore(kind: 'redis' | 'postgres'): Promise<ScaleStore> {
  return kind === 'redis' ? startRedis() : startPostgres();
}

async function startRedis(): Promise<ScaleStore> {
  const server = await startPrivateRedisServer();
  const admin = new Redis(server.port, '127.0.0.1');
  return {
    kind: 'redis',
    name: 'Redis',
    url: server.url,
    describe: () => describeEnvironment(admin),
    reset: () => admin.flushall(),
    meter: infoMeter(admin),
    async stop() {
      admin.disconnect();
      await server.stop();
    },
  };
}

/**
 * A private cluster (test/support/private-postgres.ts): its CPU read from /proc, its statements from
 * `pg_stat_statements` (postgres-meter.ts).
 */
async function startPostgres(): Promise<ScaleStore> {
  const server = await startPrivatePostgres({ preload: ['pg_stat_statements'] });
  const admin = new pg.Pool({ host: '127.0.0.1', port: server.port, user: 'postgres', database: 'postgres', max: 1 });
  admin.on('error', () => undefined);
  return {
    kind: 'postgres',
    name: 'PostgreSQL',
    url: `postgres://postgres@127.0.0.1:${server.port}/postgres`,
    async describe() {
      const { rows } = await admin.query<{ server_version: string }>('SHOW server_version');
      return `${describeMachine(`PostgreSQL ${rows[0].server_version}`)} (a private cluster, fsync off)`;
    },
    async reset() {
      const { rows } = await admin.query<{ name: string }>(
        "SELECT quote_ident(tablename) AS name FROM pg_tables WHERE schemaname = 'public'",
      );
      if (rows.length) await admin.query(`DROP TABLE ${rows.map((row) => row.name).join(', ')}`);
    },
    meter: await postgresStatementMeter(admin, await server.pid()),
    async stop() {
      await admin.end();
      await server.remove();
    },
  };
}
