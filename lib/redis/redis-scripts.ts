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
/** The keys and arguments the occurrence scripts start with. */
export type OccurrenceArgs = [lockKey: string, fenceKey: string, recordKey: string, owner: string, ttl: number, lockedBy: string];

/** Script arguments: the number of keys, the keys, then the other arguments. */
type Variadic = [numberOfKeys: number, ...keysThenArguments: (string | number)[]];

export interface LockCommands {
  /** acquire.lua: the fencing token, or 0 when the lock is held. */
  schedulerLockAcquire(lockKey: string, fenceKey: string, owner: string, ttl: number): Promise<number>;
  /** claim-occurrence.lua: `[fence]`, `[0]` held, `[-1, state]` occurrence already claimed. */
  schedulerLockClaimOccurrence(...args: [...OccurrenceArgs, occurrence: number]): Promise<[number, string?]>;
  schedulerLockRelease(...args: Variadic): Promise<OwnerCheck>;
  /** An owner value and a TTL per key; also `extend` of a single lock. */
  schedulerLockRenew(...args: Variadic): Promise<OwnerCheck[]>;
  /** recover.lua: `[fence, attempt, previousHolder]`, `[0]` held or in grace, `[-1, state]` nothing to recover. */
  schedulerLockRecover(
    ...args: [...OccurrenceArgs, occurrence: number, maxAttempts: number, grace: number]
  ): Promise<[number, (number | string)?, string?]>;
}

const SCRIPTS = {
  schedulerLockAcquire: { file: 'acquire.lua', numberOfKeys: 2 },
  schedulerLockClaimOccurrence: { file: 'claim-occurrence.lua', numberOfKeys: 3 },
  // Variadic (numberOfKeys undefined): the job record key is passed only for occurrence locks.
  schedulerLockRelease: { file: 'release.lua', numberOfKeys: undefined },
  schedulerLockRenew: { file: 'renew.lua', numberOfKeys: undefined },
  schedulerLockRecover: { file: 'recover.lua', numberOfKeys: 3 },
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
