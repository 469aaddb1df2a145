import { Redis } from 'ioredis';

/** Deletes the demo's keys (locks and fencing counters) with SCAN, so the shared Redis keeps nothing of it. */
export async function deleteKeysUnder(url: string, prefix: string): Promise<void> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1_000);
      cursor = next;
      if (keys.length) await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    await client.quit();
  }
}
