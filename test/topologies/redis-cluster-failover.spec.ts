import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis, type Cluster } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivateRedisCluster, type PrivateRedisCluster } from '../support/redis-cluster.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { placementOf } from './cluster-placement.js';
import { replicationOffset } from './replication.js';

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
        lock: { redis: client, keyPrefix, defaultLockAtMostFor: '10s', lockedBy: 'cluster-failover-app', acquireTimeout: '500ms' },
        providers: [FailoverJobs],
      });
      await nextEvent(app.history$, jobEvent('released', JOB));
      const fenceKey = `${keyPrefix}:{${JOB}}:fence`;
      const primaryPort = Number((await placementOf(client, fenceKey)).master.split(':')[1]);
      const replicaPort = redisCluster.replicaPorts[redisCluster.ports.indexOf(primaryPort)];
      const [primaryAdmin, replicaAdmin] = [primaryPort, replicaPort].map((port) => new Redis(port, '127.0.0.1'));
      admins.push(primaryAdmin, replicaAdmin);
      const storeErrorSkip = nextEvent(app.events$, (event) => event.type === 'skipped' && event.jobName === JOB && event.reason === 'store-error', 20_000);

      // Freeze writes and let the replica apply everything: every token drawn so far is then on it.
      await primaryAdmin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
      const written = await replicationOffset(primaryAdmin, 'master_repl_offset');
      await waitUntil(async () => (await replicationOffset(replicaAdmin, 'slave_repl_offset')) >= written, 'the replica applied every write');
      primaryAdmin.disconnect(); // before the kill, or it would keep reconnecting to a dead port
      await redisCluster.kill(primaryPort);
      const tokensBefore = app.recorded.filter(jobEvent('acquired', JOB)).map((event) => event.fencingToken!);

      await waitUntil(async () => ((await replicaAdmin.call('ROLE')) as string[])[0] === 'master', 'the Cluster promoted the replica', {
        timeoutMs: 20_000,
        intervalMs: 100,
      });
      const promotedAt = Date.now();
      await storeErrorSkip;
      expect(app.logs.texts('error', 'SchedulerLock').some((text) => text.startsWith(`Could not take lock "${JOB}"`))).toBe(true);

      const first = await nextEvent(app.history$, (event): event is LockEventOf<'acquired'> => jobEvent('acquired', JOB)(event) && event.at >= promotedAt, 20_000);
      expect(first.fencingToken).toBeGreaterThan(Math.max(...tokensBefore));
      expect(Number(await replicaAdmin.get(fenceKey))).toBeGreaterThanOrEqual(first.fencingToken!);
      await nextEvent(app.history$, (event) => jobEvent('released', JOB)(event) && event.fencingToken === first.fencingToken, 10_000);
    } finally {
      for (const admin of admins) if (admin.status !== 'end') admin.disconnect();
      client.disconnect();
    }
  });
});
