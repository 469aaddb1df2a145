import type pg from 'pg';
import type { LockConfiguration } from 'nest-scheduler-lock/provider';
import { PostgresLockProvider } from 'nest-scheduler-lock/postgres';
import { freeLockName, heldLockName, HOLD_ELSEWHERE_MS, unexpected, type Contender } from '../contenders/contender.js';

/** A way to take and release a PostgreSQL lock, as {@link Contender} is for Redis; all share one pool. */
export type PostgresContender = Pick<Contender, 'label' | 'cycle' | 'attemptHeld'> & {
  /** Makes worker `w`'s contended lock held by another owner for the whole run. */
  holdElsewhere(worker: number): Promise<void>;
};

export const FLOOR_LABEL = "floor: ShedLock's INSERT … ON CONFLICT … RETURNING, UPDATE";
export const OURS_LABEL = 'ours PostgresLockProvider';

/**
 * ShedLock's JDBC provider on PostgreSQL with the database's time (`usingDbTime()`), its table and its two
 * statements: the acquire, one `INSERT … ON CONFLICT (name) DO UPDATE … WHERE lock_until <= now()`, with
 * `RETURNING` so the taker learns it in the same round trip, and the release, one `UPDATE` that applies
 * `lockAtLeastFor`. Named prepared statements (as JDBC's server-side prepare), each on a connection the pool
 * checks out for that statement (`pool.query`). No fencing token, no owner beyond `locked_by`, no history:
 * the least a row lock on PostgreSQL can do, and the floor ours is measured against.
 */
export async function floorContender(pool: pg.Pool, schema: string, ttlMs: number): Promise<PostgresContender> {
  const table = `"${schema}".shedlock`;
  await pool.query(`CREATE TABLE ${table} (name varchar(64) PRIMARY KEY, lock_until timestamptz NOT NULL,
    locked_at timestamptz NOT NULL, locked_by varchar(255) NOT NULL)`);
  const acquire = {
    name: 'bench_floor_acquire',
    text: `INSERT INTO ${table} AS s (name, lock_until, locked_at, locked_by)
      VALUES ($1, now() + $2 * interval '1 millisecond', now(), $3)
      ON CONFLICT (name) DO UPDATE SET lock_until = excluded.lock_until, locked_at = excluded.locked_at,
        locked_by = excluded.locked_by
      WHERE s.lock_until <= now() RETURNING s.locked_at`,
  };
  const release = {
    name: 'bench_floor_release',
    text: `UPDATE ${table} SET lock_until = greatest(locked_at + $2 * interval '1 millisecond', now())
      WHERE name = $1 AND locked_by = $3`,
  };
  const take = async (name: string, ms: number, by: string) =>
    (await pool.query({ ...acquire, values: [name, ms, by] })).rowCount === 1;
  return {
    label: FLOOR_LABEL,
    async cycle(worker, whileHeld) {
      const name = freeLockName(worker);
      if (!(await take(name, ttlMs, 'bench'))) throw unexpected(FLOOR_LABEL, 'a free lock was not taken');
      whileHeld?.();
      const { rowCount } = await pool.query({ ...release, values: [name, 0, 'bench'] });
      if (rowCount !== 1) throw unexpected(FLOOR_LABEL, 'a lock held was not released');
    },
    async holdElsewhere(worker) {
      if (!(await take(heldLockName(worker), HOLD_ELSEWHERE_MS, 'bench-holder')))
        throw unexpected(FLOOR_LABEL, 'the holder could not take its lock');
    },
    async attemptHeld(worker) {
      if (await take(heldLockName(worker), ttlMs, 'bench')) throw unexpected(FLOOR_LABEL, 'a held lock was taken');
    },
  };
}

/** `PostgresLockProvider.lock()` + `SimpleLock.unlock()` on the same pool, configurations built once. */
export function oursContender(pool: pg.Pool, schema: string, ttlMs: number, maxWorkers: number): PostgresContender {
  const provider = new PostgresLockProvider(pool, { schema, node: 'bench' });
  const holder = new PostgresLockProvider(pool, { schema, node: 'bench-holder' });
  const configuration = (name: string, ms = ttlMs): LockConfiguration => ({
    name,
    lockAtMostFor: ms,
    lockAtLeastFor: 0,
  });
  const free = Array.from({ length: maxWorkers }, (_, worker) => configuration(freeLockName(worker)));
  const held = Array.from({ length: maxWorkers }, (_, worker) => configuration(heldLockName(worker)));
  return {
    label: OURS_LABEL,
    async cycle(worker, whileHeld) {
      const lock = await provider.lock(free[worker]);
      if (!lock) throw unexpected(OURS_LABEL, 'a free lock was not taken');
      whileHeld?.();
      await lock.unlock();
    },
    async holdElsewhere(worker) {
      if (!(await holder.lock(configuration(heldLockName(worker), HOLD_ELSEWHERE_MS))))
        throw unexpected(OURS_LABEL, 'the holder could not take its lock');
    },
    async attemptHeld(worker) {
      if (await provider.lock(held[worker])) throw unexpected(OURS_LABEL, 'a held lock was taken');
    },
  };
}
