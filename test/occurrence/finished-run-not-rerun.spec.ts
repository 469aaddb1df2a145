import { Redis } from 'ioredis';
import { startPrivateRedisServer } from '../support/redis-server.js';
import { describeFinishedRunNotRerun } from './finished-run-scenario.js';

describeFinishedRunNotRerun('Redis', ['killed'], async () => {
  const server = await startPrivateRedisServer({ persistent: true });
  return {
    lockOptions: async (node) => ({ redis: server.url, defaultLockAtMostFor: '1m', node }),
    outage: () => server.kill(),
    recover: () => server.start(), // from its AOF
    async readRecord(name) {
      const redis = new Redis(server.url);
      const { state, node, attempt } = await redis
        .hgetall(`job-lock:{${name}}:record`)
        .finally(() => redis.disconnect());
      return state === undefined ? undefined : { state, node, attempt: Number(attempt) };
    },
    stop: () => server.stop(),
  };
});
