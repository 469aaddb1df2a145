import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { openRedis } from './redis-client-choice.js';

/** The shared Redis of this machine and of CI. Tests only add and delete their own prefixed keys. */
export const SHARED_REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';

/** A key prefix no other test (or run) uses. */
export function uniquePrefix(label = 'test'): string {
  return `nsl-${label}-${process.pid}-${randomUUID().slice(0, 8)}`;
}

/** A client to the shared Redis, of the kind `REDIS_CLIENT` chooses (see redis-client-choice.ts). */
export function sharedRedis(): Redis {
  return openRedis(SHARED_REDIS_URL, { maxRetriesPerRequest: 1 });
}

/** Deletes every key under `prefix` (SCAN, never FLUSH*). */
export async function deleteKeys(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length) await client.del(...keys);
  } while (cursor !== '0');
}
