import { hostname } from 'node:os';

/** Settings of one instance of the sample app, from its environment. */
export const config = {
  /** This instance's name, in its output and stored with the locks it holds. */
  instanceId: process.env.INSTANCE_ID ?? `${hostname()}:${process.pid}`,
  redisUrl: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
  keyPrefix: process.env.KEY_PREFIX ?? 'sample-app',
};
