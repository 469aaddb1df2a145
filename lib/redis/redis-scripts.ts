import { readFileSync } from 'node:fs';
import type { Cluster, Redis } from 'ioredis';

/** A Redis client the provider can use: a single node (also behind Sentinel) or a Cluster. */
export type RedisClient = Redis | Cluster;

/** Owner-check outcome of the release and extend scripts. */
export const enum OwnerCheck {
  Done = 1,
  Expired = 0,
  NotOwner = -1,
}

/** The lock scripts as ioredis commands; ioredis sends EVALSHA and falls back to EVAL after a SCRIPT FLUSH. */
export interface LockCommands {
  schedulerLockAcquire(lockKey: string, fenceKey: string, token: string, ttl: number, lockedBy: string): Promise<number | null>;
  schedulerLockRelease(lockKey: string, token: string, keepFor: number): Promise<OwnerCheck>;
  schedulerLockExtend(lockKey: string, token: string, ttl: number): Promise<OwnerCheck>;
  /** Variadic: `numberOfKeys` first, then the keys, then a token and a TTL per key. */
  schedulerLockRenew(numberOfKeys: number, ...keysThenTokensAndTtls: (string | number)[]): Promise<OwnerCheck[]>;
}

const SCRIPTS = {
  schedulerLockAcquire: { file: 'acquire.lua', numberOfKeys: 2 },
  schedulerLockRelease: { file: 'release.lua', numberOfKeys: 1 },
  schedulerLockExtend: { file: 'extend.lua', numberOfKeys: 1 },
  schedulerLockRenew: { file: 'renew.lua', numberOfKeys: undefined }, // variadic
} as const;

const sources = new Map(
  Object.values(SCRIPTS).map(({ file }) => [file, readFileSync(new URL(`./lua/${file}`, import.meta.url), 'utf8')]),
);

/** Defines the lock scripts on a client once; later calls on the same client are no-ops. */
export function withLockCommands(client: RedisClient): RedisClient & LockCommands {
  const target = client as RedisClient & Partial<LockCommands>;
  for (const [name, { file, numberOfKeys }] of Object.entries(SCRIPTS)) {
    if (typeof target[name as keyof LockCommands] !== 'function') {
      client.defineCommand(name, { lua: sources.get(file)!, numberOfKeys });
    }
  }
  return target as RedisClient & LockCommands;
}
