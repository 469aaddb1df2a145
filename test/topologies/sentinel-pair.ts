import { Redis } from 'ioredis';
import { usePrivateRedisServer, type UsedPrivateRedisServer } from '../support/private-redis.js';
import { startPrivateSentinel, type PrivateSentinel } from '../support/redis-sentinel.js';
import { setByHooks, type HookValues } from '../support/set-by-hooks.js';
import type { SchedulerApp } from '../support/scheduler-app.js';
import { waitUntil } from '../support/wait-until.js';
import type { Failover } from './failover.js';

/** What {@link useSentinelPair} gives a spec: set by its hooks, so read inside tests and hooks only. */
export interface SentinelPair {
  readonly primary: UsedPrivateRedisServer;
  readonly replica: UsedPrivateRedisServer;
  readonly sentinel: PrivateSentinel;
  /** A client of the Sentinel, to ask it who the master is. */
  readonly sentinelAdmin: Redis;
  /** The replica's process, to pause it (SIGSTOP) or let it go on. */
  readonly replicaPid: number;
  /** A failover of this pair for `expectLocksThroughFailover`: kill the primary, the Sentinel promotes the replica. */
  failover(app: SchedulerApp, job: string, keyPrefix: string): Failover;
}

/**
 * Registers the hooks of a spec that needs a failover to happen: a private primary and its replica, linked,
 * and a Sentinel (down-after 500 ms) that knows both, started before the spec's first test and stopped
 * after its last.
 */
export function useSentinelPair(): SentinelPair {
  const primary = usePrivateRedisServer();
  const replica = usePrivateRedisServer(() => ({ replicaOf: primary.server.port }));
  const values: HookValues<Pick<SentinelPair, 'sentinel' | 'sentinelAdmin' | 'replicaPid'>> = {};
  beforeAll(async () => {
    await waitUntil(
      async () => /^master_link_status:up/m.test(await replica.admin.info('replication')),
      'the replica is linked to the primary',
    );
    values.replicaPid = Number(/^process_id:(\d+)/m.exec(await replica.admin.info('server'))![1]);
    const sentinel = await startPrivateSentinel(primary.server.port, { downAfterMs: 500 });
    values.sentinel = sentinel;
    values.sentinelAdmin = new Redis(sentinel.port, '127.0.0.1');
    // The Sentinel learns of the replica from the primary's INFO; it can only promote one it knows.
    await waitUntil(
      async () =>
        ((await values.sentinelAdmin!.call('SENTINEL', 'REPLICAS', sentinel.clientOptions.name)) as unknown[])
          .length === 1,
      'the Sentinel knows the replica',
    );
  });
  afterAll(async () => {
    values.sentinelAdmin?.disconnect();
    await values.sentinel?.stop();
  });
  const hooked = setByHooks('useSentinelPair', values, ['sentinel', 'sentinelAdmin', 'replicaPid']);
  return {
    primary,
    replica,
    get sentinel() {
      return hooked.sentinel;
    },
    get sentinelAdmin() {
      return hooked.sentinelAdmin;
    },
    get replicaPid() {
      return hooked.replicaPid;
    },
    failover: (app, job, keyPrefix) => ({
      app,
      job,
      primaryAdmin: primary.admin,
      replicaAdmin: replica.admin,
      fenceKey: `${keyPrefix}:{${job}}:fence`,
      killPrimary: () => primary.server.kill(),
      promotion: {
        done: async () => {
          const name = hooked.sentinel.clientOptions.name;
          const master = (await hooked.sentinelAdmin.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
          return master[1] === String(replica.server.port);
        },
        by: 'the Sentinel',
      },
    }),
  };
}
