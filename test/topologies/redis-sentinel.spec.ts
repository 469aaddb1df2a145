import { readOwnerValue } from '../../lib/core/provider/owner-value.js';
import { readLockValue } from '../../lib/providers/redis/fenced-value.js';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { describeLockProvider } from '../../lib/provider-tests/index.js';
import { lockConfig, mustLock, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import { redisLockProviderSubject } from '../providers/redis-subject.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { startPrivateSentinel, type PrivateSentinel } from '../support/redis-sentinel.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { deleteKeys, uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

/** Its admin is a direct connection to the master, to see where the clients that go through Sentinel landed. */
const master = usePrivateRedisServer();
let sentinel: PrivateSentinel;

beforeAll(async () => {
  sentinel = await startPrivateSentinel(master.server.port);
});
afterAll(() => sentinel?.stop());

/** A client that asks the Sentinel where the master is. */
function sentinelClient(): Redis {
  return new Redis({ ...sentinel.clientOptions, maxRetriesPerRequest: 1 });
}

const subject = redisLockProviderSubject('RedisLockProvider through Redis Sentinel', {
  label: 'sentinel',
  openClient: sentinelClient,
  deleteKeys,
});
describe('the conformance kit', () => {
  // Inside this block, so the keys are deleted before the file's own afterAll stops the servers.
  afterAll(() => subject.close());
  describeLockProvider(subject, { describe, it });
});

describe('RedisLockProvider through Redis Sentinel', () => {
  it('takes its locks on the master the Sentinel names', async () => {
    const client = sentinelClient();
    const provider = new RedisLockProvider(client, {
      keyPrefix: uniquePrefix('sentinel-master'),
      node: 'via-sentinel',
    });
    try {
      const name = uniqueLockName();
      const lock = await mustLock(provider, lockConfig(name));
      const { owner } = readLockValue((await master.admin.get(provider.lockKey(name)))!);
      expect(readOwnerValue(owner)?.node).toBe('via-sentinel');
      await lock.unlock();
      expect(await master.admin.exists(provider.lockKey(name))).toBe(0);
    } finally {
      await deleteKeys(master.admin, provider.keyPrefix);
      await client.quit();
    }
  });
});

@Injectable()
class SentinelJobs {
  @SchedulerLock()
  @Interval('sentinel-interval', 100)
  interval() {}
}

describe('SchedulerLockModule with Sentinel options', () => {
  const keyPrefix = uniquePrefix('sentinel-app');
  /** Names the module's connection on the master, so the test can tell when it is gone. */
  const connectionName = `nsl-sentinel-app-${process.pid}`;

  afterEach(closeSchedulerApps);
  afterAll(() => deleteKeys(master.admin, keyPrefix));

  /** Whether the master has a connection named {@link connectionName}. */
  async function moduleConnectionOpen(): Promise<boolean> {
    const clients = (await master.admin.client('LIST')) as string;
    return clients.split('\n').some((line) => line.includes(` name=${connectionName} `));
  }

  it('creates a client through the Sentinel, runs a locked job on the master, and closes the client on app.close()', async () => {
    const app = await startSchedulerApp({
      lock: {
        redis: { ...sentinel.clientOptions, connectionName },
        keyPrefix,
        defaultLockAtMostFor: '10s',
        node: 'sentinel-app',
      },
      providers: [SentinelJobs],
    });
    const acquired = await nextEvent(app.history$, jobEvent('acquired', 'sentinel-interval'));
    await nextEvent(app.history$, jobEvent('released', 'sentinel-interval'));
    expect(Number(await master.admin.get(`${keyPrefix}:{sentinel-interval}:fence`))).toBeGreaterThanOrEqual(
      acquired.fencingToken!,
    );
    expect(await moduleConnectionOpen()).toBe(true);

    await app.close();

    // The client's QUIT was answered; the master drops the connection right after.
    await waitUntil(
      async () => !(await moduleConnectionOpen()),
      `the master has no connection named ${connectionName}`,
      { timeoutMs: 2_000 },
    );
  });
});
