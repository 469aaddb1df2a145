import type { Redis } from 'ioredis';

/** A replication offset from `INFO replication`: what a primary has written, or what a replica has applied. */
export async function replicationOffset(client: Redis, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const offset = new RegExp(`^${field}:(\\d+)`, 'm').exec(await client.info('replication'));
  if (!offset) throw new Error(`INFO replication has no ${field}`);
  return Number(offset[1]);
}
