import { readOwnerValue } from '../../lib/core/provider/owner-value.js';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import type { Cluster } from 'ioredis';
import { LockEvents, LockingTaskExecutor, SchedulerLock, type LockEvent } from '../../lib/index.js';
import { describeLockProvider } from '../../lib/provider-tests/index.js';
import { isLocked, lockConfig, mustLock } from '../../lib/provider-tests/lock-probes.js';
import { redisLockProviderSubject } from '../providers/redis-subject.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { deleteClusterKeys } from '../support/redis-cluster.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { sharedRedisCluster, type SharedRedisCluster } from '../support/shared-redis-cluster.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { pollUntil } from '../support/timing.js';
import { masterConnection, mastersInSlotOrder, namesAcrossMasters, placementOf } from './cluster-placement.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

/** The run's Cluster: this file kills no node, and deletes the keys of its prefixes. */
let redisCluster: SharedRedisCluster;

beforeAll(async () => {
  redisCluster = await sharedRedisCluster();
});

/**
 * The kit's clients, disconnected after it: some keep node connections open after quit(), which kept this
 * file's worker from exiting once the Cluster outlived the file.
 */
const kitClients: Cluster[] = [];
const subject = redisLockProviderSubject('RedisLockProvider on a 3-master Redis Cluster', {
  label: 'cluster',
  openClient: () => {
    const client = redisCluster.connect();
    kitClients.push(client);
    return client;
  },
  deleteKeys: deleteClusterKeys,
});
describe('the conformance kit', () => {
  afterAll(async () => {
    await subject.close(); // deletes the kit's keys from the run's Cluster
    kitClients.forEach((client) => client.disconnect());
  });
  describeLockProvider(subject, { describe, it });
});

/** An occurrence (epoch ms) for claims made outside a scheduler. */
const OCCURRENCE = new Date('2026-01-01T00:00:00.000Z');

describe('RedisLockProvider on a 3-master Redis Cluster, across slots', () => {
  const keyPrefix = uniquePrefix('cluster-slots');
  let admin: Cluster;
  let clients: Cluster[];
  let provider: RedisLockProvider;
  let other: RedisLockProvider;

  beforeAll(async () => {
    clients = [redisCluster.connect(), redisCluster.connect(), redisCluster.connect()];
    [admin] = clients;
    provider = new RedisLockProvider(clients[1], { keyPrefix, node: 'node-a' });
    other = new RedisLockProvider(clients[2], { keyPrefix, node: 'node-b' });
    await admin.ping(); // the slot map is known once the client is ready
  });

  afterAll(async () => {
    await deleteClusterKeys(admin, keyPrefix);
    await Promise.all(clients.map((client) => client.quit()));
  });

  it('puts the locks of names in different slots on 3 different masters, each with its fence and job record in its slot', async () => {
    const names = await namesAcrossMasters(admin, provider, 3, 'placed');
    const claims = await Promise.all(names.map((name) => provider.lockOccurrence(lockConfig(name), OCCURRENCE)));
    const mastersUsed: string[] = [];
    for (const name of names) {
      const key = provider.lockKey(name);
      const [lock, fence, record] = await Promise.all(
        [key, `${key}:fence`, `${key}:record`].map((each) => placementOf(admin, each)),
      );
      expect(fence).toEqual(lock);
      expect(record).toEqual(lock);
      // Asked on the master alone: a node that does not serve the slot would answer MOVED.
      const master = masterConnection(admin, lock.master);
      expect(await master.exists(key, `${key}:fence`, `${key}:record`)).toBe(3);
      expect(readOwnerValue((await master.get(key))!)?.node).toBe('node-a');
      mastersUsed.push(lock.master);
    }
    expect(new Set(mastersUsed)).toEqual(new Set(mastersInSlotOrder(admin)));
    expect(mastersUsed).toHaveLength(3);
    for (const claim of claims) {
      if (!('lock' in claim)) throw new Error(`expected the occurrence, got ${JSON.stringify(claim)}`);
      await claim.lock.finish!('succeeded');
    }
  });

  it('renewLeases renews locks on 3 masters in one call, and tells each lost lock apart (expired, not-owner)', async () => {
    const [renewedName, expiredName, stolenName] = await namesAcrossMasters(admin, provider, 3, 'renewed');
    const locks = await Promise.all(
      [renewedName, expiredName, stolenName].map((name) => mustLock(provider, lockConfig(name, 1_000))),
    );
    await admin.del(provider.lockKey(expiredName)); // as if its TTL had run out
    await admin.del(provider.lockKey(stolenName));
    const thief = await mustLock(other, lockConfig(stolenName, 10_000));

    const outcomes = await provider.renewLeases!(locks.map((lock) => ({ lock, ttl: 30_000 })));

    expect(outcomes).toEqual(['renewed', 'expired', 'not-owner']);
    expect(await admin.pttl(provider.lockKey(renewedName))).toBeGreaterThan(20_000);
    expect(await admin.exists(provider.lockKey(expiredName))).toBe(0);
    expect(await admin.pttl(provider.lockKey(stolenName))).toBeLessThanOrEqual(10_000);
    await locks[0].unlock();
    await thief.unlock();
  });

  it('keeps 5 keepAlive runs on 3 masters held well past their 300 ms lease, with extended events for each', async () => {
    const lease = 300;
    // A renewal comes every lease / 3: this many span more than two leases.
    const renewalsToWaitFor = 8;
    const names = await namesAcrossMasters(admin, provider, 5, 'kept');
    const lockEvents = new LockEvents();
    const recorded: LockEvent[] = [];
    const recording = lockEvents.events$.subscribe((event) => recorded.push(event));
    const executor = new LockingTaskExecutor(provider, { node: 'keeper', events: lockEvents });
    try {
      const runs = names.map((name) => {
        const renewed = events(
          lockEvents.events$,
          (event) => event.type === 'extended' && event.lockName === name,
          renewalsToWaitFor,
          5_000,
        );
        renewed.catch(() => undefined); // awaited by the run; a run that never starts fails the test below instead
        const task = async () => {
          await renewed;
          return isLocked(other, name);
        };
        return executor.executeWithLock(task, { name, lockAtMostFor: '10s', keepAlive: { lease } });
      });
      const results = await Promise.all(runs);

      expect(results).toEqual(names.map(() => ({ executed: true, result: true })));
      expect(recorded.filter(({ type }) => type === 'lost' || type === 'release-failed')).toEqual([]);
      for (const name of names) {
        const released = recorded.filter(
          (event): event is LockEventOf<'released'> => event.type === 'released' && event.lockName === name,
        );
        expect(released).toHaveLength(1);
        expect(released[0].heldForMs).toBeGreaterThan(2 * lease);
        expect(await isLocked(other, name)).toBe(false);
      }
    } finally {
      recording.unsubscribe();
      await executor.shutdown(1_000);
    }
  });

  it('claims, records, recovers and finishes occurrences of jobs on 3 masters (lockOccurrence, readJobRecord, recoverOccurrence)', async () => {
    const names = await namesAcrossMasters(admin, provider, 3, 'occurrence');
    const crashedRunLock = 200;
    await Promise.all(
      names.map(async (name) => {
        const claim = await provider.lockOccurrence(lockConfig(name, crashedRunLock), OCCURRENCE);
        expect('lock' in claim).toBe(true);
        const claimedAt = performance.now();
        expect(await other.lockOccurrence(lockConfig(name), OCCURRENCE)).toEqual({
          refused: 'already-ran',
          running: true,
        });
        expect(await other.recoverOccurrence(lockConfig(name), OCCURRENCE, 2, 0)).toEqual({ refused: 'running' });
        expect(await other.readJobRecord(name)).toMatchObject({
          occurrence: new Date(OCCURRENCE),
          state: 'running',
          node: 'node-a',
          attempt: 1,
          held: true,
        });

        // node-a "dies": its lock expires unreleased, and node-b takes the occurrence over.
        const { value: recovery } = await pollUntil(
          async () => {
            const recovered = await other.recoverOccurrence(lockConfig(name), OCCURRENCE, 2, 0);
            return 'lock' in recovered ? recovered : undefined;
          },
          claimedAt + 2 * crashedRunLock,
        );
        expect(recovery).toMatchObject({ attempt: 2, previousNode: 'node-a' });
        expect(await provider.readJobRecord(name)).toMatchObject({
          state: 'running',
          node: 'node-b',
          attempt: 2,
          previousNode: 'node-a',
          held: true,
        });

        await recovery.lock.finish!('succeeded');
        expect(await provider.readJobRecord(name)).toMatchObject({
          state: 'succeeded',
          node: 'node-b',
          finishedAt: expect.any(Date),
          held: false,
        });
        expect(await other.recoverOccurrence(lockConfig(name), OCCURRENCE, 3, 0)).toEqual({
          refused: 'settled',
          state: 'succeeded',
        });
      }),
    );
  });
});

@Injectable()
class ClusterJobs {
  @SchedulerLock()
  @Interval('cluster-interval', 100)
  interval() {}

  @SchedulerLock()
  @Cron('* * * * * *', { name: 'cluster-cron' })
  cron() {}
}

describe('SchedulerLockModule on a 3-master Redis Cluster client', () => {
  const keyPrefix = uniquePrefix('cluster-app');
  let clusterClient: Cluster;

  beforeAll(() => {
    clusterClient = redisCluster.connect();
  });
  afterEach(closeSchedulerApps);
  afterAll(async () => {
    await deleteClusterKeys(clusterClient, keyPrefix);
    await clusterClient.quit();
  });

  it('runs a locked interval job and a once-per-occurrence cron job, and leaves the Cluster client it was handed open', async () => {
    const app = await startSchedulerApp({
      lock: { redis: clusterClient, keyPrefix, defaultLockAtMostFor: '10s', node: 'cluster-app' },
      providers: [ClusterJobs],
    });
    for (const jobName of ['cluster-interval', 'cluster-cron']) {
      const acquired = await nextEvent(app.history$, jobEvent('acquired', jobName));
      await nextEvent(app.history$, jobEvent('released', jobName));
      // The run's fencing token was drawn in this Cluster.
      const fence = Number(await clusterClient.get(`${keyPrefix}:{${jobName}}:fence`));
      expect(fence).toBeGreaterThanOrEqual(acquired.fencingToken!);
    }
    // No store fault. A 100 ms interval may find its own previous run's release still on the way on a busy
    // machine: that skip (reason `locked`) is the lock working, not a fault.
    const faults = app.recorded.filter(
      (event) => event.type === 'release-failed' || (event.type === 'skipped' && event.reason !== 'locked'),
    );
    expect(faults).toEqual([]);

    await app.close();

    expect(clusterClient.status).toBe('ready');
    const record = await new RedisLockProvider(clusterClient, { keyPrefix }).readJobRecord('cluster-cron');
    expect(record).toMatchObject({ state: 'succeeded', node: 'cluster-app', attempt: 1, held: false });
  });
});
