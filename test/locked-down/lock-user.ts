import type { Redis } from 'ioredis';

/**
 * Every command the library sends to a single Redis node, read from lib/providers/redis (the provider,
 * its Lua scripts, the operator store) and ioredis's connection setup, and proven both ways by acl-user.spec.ts: an app and
 * the provider API work as a user allowed exactly these, and each one withheld makes something fail.
 * The `ACL SETUSER` line of docs/redis.md is built from this list.
 */
export const LOCK_USER_COMMANDS = [
  // The provider's Lua scripts, called by SHA1; their source is sent once to a server that lacks them (NOSCRIPT).
  'evalsha',
  'eval',
  // What the scripts run: Redis checks each against the caller's ACL.
  'set',
  'get',
  'del',
  'pexpire',
  'hget',
  'hset',
  'exists',
  'time',
  // A job's lock and its pause marker, read together when a job's lock is taken.
  'mget',
  // Runs history and crash recovery in the scripts (finish, recover, force-unlock).
  'hmget',
  'lpush',
  'ltrim',
  'pttl',
  // readJobRecord (catch-up): MULTI, HGETALL, EXISTS, EXEC.
  'multi',
  'hgetall',
  'exec',
  // The cluster view: heartbeats and skip counts (HSET, HINCRBY), triggers (HGETALL, HDEL), history (LRANGE).
  'hincrby',
  'hdel',
  'lrange',
  // ioredis's ready check on every connection.
  'info',
] as const;

/**
 * What ioredis sends on connecting or closing that needs no permission: Redis lets any user run AUTH,
 * HELLO and QUIT, and ioredis ignores a refused `CLIENT SETINFO` (Redis 7.2+; 7.0 does not know it).
 */
export const CONNECTION_COMMANDS = ['auth', 'hello', 'quit', 'client'] as const;

/** The user the tests lock as, with its password. */
export const LOCK_USER = { name: 'locks', password: 'locks-secret' } as const;

/**
 * `ACL SETUSER` arguments of a user who may run `commands` on the keys under `keyPrefix` and nothing
 * else (no other key, no channel). `reset` first, so running it again replaces every earlier rule.
 */
export function lockUserRules(
  user: string,
  password: string,
  keyPrefix: string,
  commands: readonly string[] = LOCK_USER_COMMANDS,
): string[] {
  return [
    user,
    'reset',
    'on',
    `>${password}`,
    `~${keyPrefix}:*`,
    'resetchannels',
    '-@all',
    ...commands.map((command) => `+${command}`),
  ];
}

/** Creates (or redefines) {@link LOCK_USER} through `admin`, allowed `commands` on `keyPrefix`'s keys. */
export async function setLockUser(
  admin: Redis,
  keyPrefix: string,
  commands: readonly string[] = LOCK_USER_COMMANDS,
): Promise<void> {
  await admin.call('ACL', 'SETUSER', ...lockUserRules(LOCK_USER.name, LOCK_USER.password, keyPrefix, commands));
}

/** One entry of `ACL LOG`: who was refused what. */
export interface AclRefusal {
  readonly reason: string;
  readonly context: string;
  readonly object: string;
  readonly username: string;
}

/** The entries of `ACL LOG`, newest first. */
export async function aclRefusals(admin: Redis): Promise<AclRefusal[]> {
  const entries = (await admin.call('ACL', 'LOG')) as unknown[][];
  return entries.map((fields) => {
    const entry: Record<string, unknown> = {};
    for (let i = 0; i < fields.length; i += 2) entry[String(fields[i])] = fields[i + 1];
    return entry as unknown as AclRefusal;
  });
}
