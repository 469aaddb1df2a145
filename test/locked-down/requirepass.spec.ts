import type { RedisOptions } from 'ioredis';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { LOCK_USER, setLockUser } from './lock-user.js';
import {
  everythingSaid,
  expectStartupRefused,
  expectTicksSkippedWithOneLine,
  IntervalJob,
  refusedStartup,
} from './skipped-ticks.js';

const PASSWORD = 'default-user-secret';

const redis = usePrivateRedisServer({ requirepass: PASSWORD });
afterEach(() => closeSchedulerApps());

function startIntervalJob(
  redis: string | RedisOptions,
  keyPrefix = uniquePrefix('requirepass'),
  startupCheck?: 'fail' | 'warn',
) {
  return startSchedulerApp({
    lock: { redis, keyPrefix, defaultLockAtMostFor: '5s', startupCheck },
    providers: [IntervalJob],
  });
}

/** Credentials Redis refuses, and the cause the module names for them. */
const REFUSED_CREDENTIALS: [string, () => string, string][] = [
  [
    'a wrong password',
    () => `redis://:wrong-secret@127.0.0.1:${redis.server.port}`,
    'authentication failed: WRONGPASS',
  ],
  ['no password', () => redis.server.url, 'authentication failed: NOAUTH'],
  [
    'a wrong password for an ACL user',
    () => `redis://${LOCK_USER.name}:wrong-secret@127.0.0.1:${redis.server.port}`,
    `authentication failed for user "${LOCK_USER.name}": WRONGPASS`,
  ],
];

describe('a Redis with requirepass', () => {
  it.each<[string, () => string | RedisOptions]>([
    ['in a redis:// URL', () => `redis://:${PASSWORD}@127.0.0.1:${redis.server.port}`],
    ['in ioredis options', () => ({ host: '127.0.0.1', port: redis.server.port, password: PASSWORD })],
  ])('locks jobs with the password %s', async (_, redis) => {
    const app = await startIntervalJob(redis());

    await nextEvent(app.history$, jobEvent('released', 'IntervalJob.tick'));

    expect(app.get(IntervalJob).runs).toBeGreaterThan(0);
    expect(app.logs.texts('error')).toEqual([]);
  });

  it.each(REFUSED_CREDENTIALS)(
    '%s fails the startup with one error naming the endpoint and the failed authentication',
    async (_, url, cause) => {
      const keyPrefix = uniquePrefix('requirepass');
      await setLockUser(redis.admin, keyPrefix);

      const error = await expectStartupRefused(
        () => startIntervalJob(url(), keyPrefix),
        refusedStartup(`127.0.0.1:${redis.server.port}`, cause),
      );

      expect(error.message).not.toContain('secret');
    },
  );

  it.each(REFUSED_CREDENTIALS)(
    "%s with startupCheck 'warn': the app starts, one warning, one error line for the outage, and no run",
    async (_, url, cause) => {
      const keyPrefix = uniquePrefix('requirepass');
      await setLockUser(redis.admin, keyPrefix);
      const line = `Redis 127.0.0.1:${redis.server.port} is unreachable (${cause}): locked ticks are skipped until it is back; 1 locked job affected`;

      const app = await expectTicksSkippedWithOneLine(() => startIntervalJob(url(), keyPrefix, 'warn'), line);

      expect(app.logs.texts('warn')).toEqual([expect.stringContaining(cause)]);
      expect(everythingSaid(app).filter((text) => text.includes('secret'))).toEqual([]);
    },
  );
});
