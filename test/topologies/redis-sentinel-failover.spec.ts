import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { startPrivateSentinel, type PrivateSentinel } from '../support/redis-sentinel.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { replicationOffset } from './replication.js';

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
    const storeErrorSkip = nextEvent(app.events$, (event) => event.type === 'skipped' && event.jobName === JOB && event.reason === 'store-error', 20_000);

    // Freeze writes and let the replica apply everything: every token drawn so far is then on it.
    await primaryAdmin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
    const written = await replicationOffset(primaryAdmin, 'master_repl_offset');
    await waitUntil(async () => (await replicationOffset(replicaAdmin, 'slave_repl_offset')) >= written, 'the replica applied every write');
    primaryAdmin.disconnect(); // before the kill, or it would keep reconnecting to a dead port
    await primary.kill();
    const tokensBefore = app.recorded.filter(jobEvent('acquired', JOB)).map((event) => event.fencingToken!);

    await waitUntil(
      async () => ((await sentinelAdmin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', sentinel.clientOptions.name)) as string[])[1] === String(replica.port),
      'the Sentinel promoted the replica',
      { timeoutMs: 20_000, intervalMs: 100 },
    );
    const promotedAt = Date.now();
    await storeErrorSkip;
    expect(app.logs.texts('error', 'SchedulerLock').some((text) => text.startsWith(`Could not take lock "${JOB}"`))).toBe(true);

    const first = await nextEvent(app.history$, (event): event is LockEventOf<'acquired'> => jobEvent('acquired', JOB)(event) && event.at >= promotedAt, 20_000);
    expect(first.fencingToken).toBeGreaterThan(Math.max(...tokensBefore));
    expect(Number(await replicaAdmin.get(`${keyPrefix}:{${JOB}}:fence`))).toBeGreaterThanOrEqual(first.fencingToken!);
    await nextEvent(app.history$, (event) => jobEvent('released', JOB)(event) && event.fencingToken === first.fencingToken, 10_000);
  });
});
