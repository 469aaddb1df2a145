import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis, type Cluster } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { placementOf } from './cluster-placement.js';
import { expectLocksThroughFailover } from './failover.js';

const JOB = 'cluster-failover-interval';

@Injectable()
class FailoverJobs {
  @SchedulerLock()
  @Interval(JOB, 100)
  tick() {}
}

let redisCluster: PrivateRedisCluster;

beforeAll(async () => {
  redisCluster = await startPrivateRedisCluster({ replicas: true, nodeTimeoutMs: 1_000 });
});
afterAll(() => redisCluster?.stop());
afterEach(closeSchedulerApps);

describe('SchedulerLockModule through a Redis Cluster failover', () => {
  it('skips ticks as store errors while the slot has no master, then locks on the promoted replica with fencing tokens above every earlier one', async () => {
    const keyPrefix = uniquePrefix('cluster-failover');
    const client: Cluster = redisCluster.connect();
    const admins: Redis[] = [];
    try {
      const app = await startSchedulerApp({
        lock: {
          redis: client,
          keyPrefix,
          defaultLockAtMostFor: '10s',
          node: 'cluster-failover-app',
          acquireTimeout: '500ms',
        },
        providers: [FailoverJobs],
      });
      await nextEvent(app.history$, jobEvent('released', JOB));
      const fenceKey = `${keyPrefix}:{${JOB}}:fence`;
      const primaryPort = Number((await placementOf(client, fenceKey)).master.split(':')[1]);
      const replicaPort = redisCluster.replicaPorts[redisCluster.ports.indexOf(primaryPort)];
      const [primaryAdmin, replicaAdmin] = [primaryPort, replicaPort].map((port) => new Redis(port, '127.0.0.1'));
      admins.push(primaryAdmin, replicaAdmin);

      await expectLocksThroughFailover({
        app,
        job: JOB,
        primaryAdmin,
        replicaAdmin,
        fenceKey,
        killPrimary: () => redisCluster.kill(primaryPort),
        promotion: {
          done: async () => ((await replicaAdmin.call('ROLE')) as string[])[0] === 'master',
          by: 'the Cluster',
        },
      });
    } finally {
      for (const admin of admins) if (admin.status !== 'end') admin.disconnect();
      client.disconnect();
    }
  });
});
