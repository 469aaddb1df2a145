import { hostname } from 'node:os';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Settings of one instance of the sample app, from its environment. */
export const config = {
  /** This instance's name, in its output and stored with the locks it holds. */
  instanceId: process.env.INSTANCE_ID ?? `${hostname()}:${process.pid}`,
  /** The PostgreSQL to lock in, when DATABASE_URL is set; the locks are in Redis otherwise. */
  databaseUrl: process.env.DATABASE_URL ?? null,
  redisUrl: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
  keyPrefix: process.env.KEY_PREFIX ?? 'sample-app',
  /** Where the locks are, for the output: a URL may hold a password, so a set variable is named, never printed. */
  storeShown: process.env.DATABASE_URL
    ? 'PostgreSQL at DATABASE_URL'
    : `Redis ${process.env.REDIS_URL ? 'at REDIS_URL' : DEFAULT_REDIS_URL}, key prefix "${process.env.KEY_PREFIX ?? 'sample-app'}"`,
};
