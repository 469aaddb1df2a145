import { hostname } from 'node:os';

const DEFAULT_REDIS_URL = 'redis://127.0.0.1:6379';

/** Settings of one instance of the sample app, from its environment. */
export const config = {
  /** This instance's name, in its output and stored with the locks it holds. */
  instanceId: process.env.INSTANCE_ID ?? `${hostname()}:${process.pid}`,
  redisUrl: process.env.REDIS_URL ?? DEFAULT_REDIS_URL,
  /** Where the Redis is, for the output: REDIS_URL may hold a password, so it is named, never printed. */
  redisShown: process.env.REDIS_URL ? 'at REDIS_URL' : DEFAULT_REDIS_URL,
  keyPrefix: process.env.KEY_PREFIX ?? 'sample-app',
};
