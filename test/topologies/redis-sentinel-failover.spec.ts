import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { startPrivateSentinel, type PrivateSentinel } from '../support/redis-sentinel.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { expectLocksThroughFailover } from './failover.js';

const JOB = 'failover-interval';

@Injectable()
class FailoverJobs {
  @SchedulerLock()
  @Interval(JOB, 100)
  tick() {}
}

let primary: PrivateRedisServer;
let replica: PrivateRedisServer;
let sentinel: PrivateSentinel;
let primaryAdmin: Redis;
let replicaAdmin: Redis;
let sentinelAdmin: Redis;

beforeAll(async () => {
  primary = await startPrivateRedisServer();
  replica = await startPrivateRedisServer({ replicaOf: primary.port });
  primaryAdmin = new Redis(primary.url);
  replicaAdmin = new Redis(replica.url);
  await waitUntil(async () => /^master_link_status:up/m.test(await replicaAdmin.info('replication')), 'the replica is linked to the primary');
  sentinel = await startPrivateSentinel(primary.port, { downAfterMs: 500 });
  sentinelAdmin = new Redis(sentinel.port, '127.0.0.1');
  // The Sentinel learns of the replica from the primary's INFO; it can only promote one it knows.
  await waitUntil(
    async () => ((await sentinelAdmin.call('SENTINEL', 'REPLICAS', sentinel.clientOptions.name)) as unknown[]).length === 1,
    'the Sentinel knows the replica',
  );
});

afterAll(async () => {
  // A second disconnect() of an ended client would leave a 2 s timer behind.
  for (const client of [primaryAdmin, replicaAdmin, sentinelAdmin]) if (client && client.status !== 'end') client.disconnect();
  await Promise.all([sentinel?.stop(), replica?.kill(), primary?.kill()]);
});

afterEach(closeSchedulerApps);

describe('SchedulerLockModule through a Sentinel failover', () => {
  it('skips ticks as store errors while no primary answers, then locks on the promoted replica with fencing tokens above every earlier one', async () => {
    const keyPrefix = uniquePrefix('sentinel-failover');
    const app = await startSchedulerApp({
      lock: { redis: sentinel.clientOptions, keyPrefix, defaultLockAtMostFor: '10s', lockedBy: 'failover-app', acquireTimeout: '500ms' },
      providers: [FailoverJobs],
    });
    await nextEvent(app.history$, jobEvent('released', JOB));

    await expectLocksThroughFailover({
      app,
      job: JOB,
      primaryAdmin,
      replicaAdmin,
      fenceKey: `${keyPrefix}:{${JOB}}:fence`,
      killPrimary: () => primary.kill(),
      promotion: {
        done: async () =>
          ((await sentinelAdmin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', sentinel.clientOptions.name)) as string[])[1] === String(replica.port),
        by: 'the Sentinel',
      },
    });
  });
});
