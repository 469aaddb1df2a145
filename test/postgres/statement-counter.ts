import type pg from 'pg';

/** Counts the statements a pool's connections run, from now on, by what they do. */
export function countStatements(pool: pg.Pool): { renewals(): number; take(): number } {
  const texts: string[] = [];
  let taken = 0;
  pool.on('acquire', (client: pg.PoolClient & { counted?: boolean }) => {
    if (client.counted) return;
    client.counted = true;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      // The provider's own statements are named (prepared); a connection's setup (its statement_timeout) is not.
      if (typeof config === 'object' && (config as { name?: unknown }).name) {
        texts.push(String((config as { text?: unknown }).text));
      }
      return query(config, ...rest);
    };
  });
  return {
    // The renewal statement is the one that may restart lockAtLeastFor (input.restart).
    renewals: () => texts.filter((text) => text.includes('input.restart')).length,
    /** The named statements since the last call. */
    take: () => {
      const since = texts.length - taken;
      taken = texts.length;
      return since;
    },
  };
}
