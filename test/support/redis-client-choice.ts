import { Redis, type RedisOptions } from 'ioredis';
import { Redis as Redis5 } from 'ioredis5';
import { Redis as Valkey } from 'iovalkey';

/**
 * The client the suites that decode script replies hand the module (`REDIS_CLIENT`, default `ioredis6`):
 *
 * - `ioredis6`: ioredis 6 as it comes, RESP3 (its default), replies in RESP2 shapes (`replyMapping: 'legacy'`);
 * - `ioredis6-resp3-map`: ioredis 6 on RESP3 with `replyMapping: 'resp3'` (maps as objects, doubles as numbers);
 * - `ioredis6-resp2`: ioredis 6 with `protocol: 2`, as teams that pinned RESP2 run it;
 * - `ioredis5`: ioredis 5 (RESP2 only), the dev dependency `ioredis5` (`npm:ioredis@^5`);
 * - `iovalkey`: iovalkey, the Valkey fork of ioredis (the same API under its own types; RESP2).
 *
 * `.ci/run` runs the Redis kit spec and the batched scripts' spec once per choice (docs/verification.md).
 */
export const REDIS_CLIENTS = ['ioredis6', 'ioredis6-resp3-map', 'ioredis6-resp2', 'ioredis5', 'iovalkey'] as const;
export type RedisClientChoice = (typeof REDIS_CLIENTS)[number];

export const REDIS_CLIENT = chosenClient(process.env.REDIS_CLIENT);

/** The RESP version the chosen client speaks. */
export const REDIS_PROTOCOL: 2 | 3 = REDIS_CLIENT === 'ioredis6' || REDIS_CLIENT === 'ioredis6-resp3-map' ? 3 : 2;

/**
 * A client of the chosen kind to `url`, with `options`. Typed as ioredis 6's `Redis`, whose API the tests
 * use: ioredis 5 and iovalkey have the same methods, with types of their own packages.
 */
export function openRedis(url: string, options: RedisOptions = {}): Redis {
  switch (REDIS_CLIENT) {
    case 'ioredis6':
      return new Redis(url, options);
    case 'ioredis6-resp3-map':
      return new Redis(url, { ...options, replyMapping: 'resp3' });
    case 'ioredis6-resp2':
      return new Redis(url, { ...options, protocol: 2 });
    case 'ioredis5':
      return new Redis5(url, options as object) as unknown as Redis;
    case 'iovalkey':
      return new Valkey(url, options as object) as unknown as Redis;
  }
}

function chosenClient(value: string | undefined): RedisClientChoice {
  if (value === undefined || value === '') return 'ioredis6';
  if ((REDIS_CLIENTS as readonly string[]).includes(value)) return value as RedisClientChoice;
  throw new Error(`REDIS_CLIENT must be one of ${REDIS_CLIENTS.join(', ')} (got ${JSON.stringify(value)})`);
}
