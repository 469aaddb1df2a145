import { jest } from '@jest/globals';
import { Redis } from 'ioredis';
import { Pool } from 'pg';

/**
 * A lazy Redis client and a pool that never connects, for specs that only construct providers: no case reaches
 * a server, and `connect` proves it. Call from a spec's top level; it ends both after the spec.
 */
export function unconnectedClients() {
  const client = new Redis({ lazyConnect: true });
  const pool = new Pool({ host: '127.0.0.1', port: 1, database: 'never' });
  const connect = jest.spyOn(pool, 'connect');
  afterAll(async () => {
    client.disconnect();
    await pool.end();
  });
  return { client, pool, connect };
}
