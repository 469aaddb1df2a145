import pg from 'pg';

/** A `pg` pool whose connections count the statements they send, each a round trip with its own reply. */
export interface CountingPool {
  readonly pool: pg.Pool;
  /** Statements sent since the pool was made, on all its connections. */
  readonly statements: () => number;
  /** Those of them that `isLockCall` picked out. */
  readonly lockCalls: () => number;
  /** Starts (or stops) noting each statement's first words, e.g. `INSERT INTO`; off in timed sections. */
  noteKinds(on: boolean): void;
  /** The first words of the statements sent while noting, in order of first use. */
  readonly kinds: Set<string>;
}

/**
 * A pool of `config` built with node-postgres's own `Client` option: a `pg.Client` subclass whose `query()`
 * (every statement of a client goes through it, a pool's and a prepared one's alike) adds one to a count.
 * Counting on the client is exact on a server that others use too (pg_stat_statements would count them
 * as well), and costs one increment per statement, the same for every contender.
 */
export function countingPool(config: pg.PoolConfig, isLockCall: (text: string) => boolean = () => false): CountingPool {
  let statements = 0;
  let lockCalls = 0;
  let noting = false;
  const kinds = new Set<string>();
  class CountingClient extends pg.Client {
    override query(...args: unknown[]): never {
      statements += 1;
      const text = (typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string } | undefined)?.text) ?? '?';
      if (isLockCall(text)) lockCalls += 1;
      if (noting) kinds.add(text.trim().split(/\s+/).slice(0, 2).join(' '));
      return (super.query as (...a: unknown[]) => never)(...args);
    }
  }
  const pool = new pg.Pool({ ...config, Client: CountingClient });
  // node-postgres throws an idle client's error at the pool; the bench's own failures surface in its calls.
  pool.on('error', () => undefined);
  return {
    pool,
    statements: () => statements,
    lockCalls: () => lockCalls,
    noteKinds: (on) => void (noting = on),
    kinds,
  };
}
