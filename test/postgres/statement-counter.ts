import type pg from 'pg';

/** Counts the statements a pool's connections run, from now on, by what they do. */
export function countStatements(pool: pg.Pool): { renewals(): number; all(): number } {
  const texts: string[] = [];
  pool.on('acquire', (client: pg.PoolClient & { counted?: boolean }) => {
    if (client.counted) return;
    client.counted = true;
    const query = client.query.bind(client) as (...args: unknown[]) => unknown;
    (client as { query: unknown }).query = (config: unknown, ...rest: unknown[]) => {
      texts.push(typeof config === 'string' ? config : String((config as { text?: unknown }).text));
      return query(config, ...rest);
    };
  });
  return {
    // The renewal statement is the one that may restart lockAtLeastFor (input.restart).
    renewals: () => texts.filter((text) => text.includes('input.restart')).length,
    all: () => texts.length,
  };
}
