import { randomUUID } from 'node:crypto';
import pg from 'pg';

/** The shared PostgreSQL of this machine and of CI (trust auth, database `test`). Tests only use schemas of their own. */
export const SHARED_POSTGRES = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  database: process.env.PGDATABASE ?? 'test',
  user: process.env.PGUSER ?? 'postgres',
};

/** A pool onto the shared PostgreSQL, or onto `port` of the same host (a private server). */
export function postgresPool(options: pg.PoolConfig = {}): pg.Pool {
  const pool = new pg.Pool({ ...SHARED_POSTGRES, max: 4, ...options });
  // node-postgres throws an idle client's error at the pool: a test's server restart must not end the run.
  pool.on('error', () => undefined);
  return pool;
}

/** A schema name no other test (or run) uses. */
export function uniqueSchema(label = 'test'): string {
  return `nsl_${label.replace(/\W/g, '_')}_${process.pid}_${randomUUID().slice(0, 8)}`;
}

/** Creates `schema` with `pool`. */
export async function createSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`CREATE SCHEMA "${schema}"`);
}

/** Drops `schema` and what it holds. */
export async function dropSchema(pool: pg.Pool, schema: string): Promise<void> {
  await pool.query(`DROP SCHEMA IF EXISTS "${schema}" CASCADE`);
}
