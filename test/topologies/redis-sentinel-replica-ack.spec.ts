import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import {
  LockingTaskExecutor,
  LockProviderUnavailableError,
  SchedulerLock,
  type SchedulerLockModuleOptions,
} from '../../lib/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { expectLocksThroughFailover } from './failover.js';
import { useSentinelPair } from './sentinel-pair.js';

const JOB = 'replica-ack-interval';

@Injectable()
class ReplicatedJobs {
  @SchedulerLock()
  @Interval(JOB, 100)
  tick() {}
}

const pair = useSentinelPair();
const { primary, replica } = pair;

afterEach(closeSchedulerApps);

/** An app whose interval job locks through the Sentinel, with `lock` options on top. */
function startApp(keyPrefix: string, lock: Partial<SchedulerLockModuleOptions> = {}) {
  return startSchedulerApp({
    lock: {
      redis: pair.sentinel.clientOptions,
      keyPrefix,
      defaultLockAtMostFor: '10s',
      acquireTimeout: '500ms',
      ...lock,
    },
    providers: [ReplicatedJobs],
  });
}

describe('minReplicasToAck through a Sentinel', () => {
  it('takes no lock the replica has not acknowledged: while it is stopped ticks are skipped, then each lock taken is on it', async () => {
    const keyPrefix = uniquePrefix('replica-ack');
    const fenceKey = `${keyPrefix}:{${JOB}}:fence`;
    const acked = await startApp(keyPrefix, { minReplicasToAck: 1, replicaAckTimeout: '200ms' });
    await nextEvent(acked.history$, jobEvent('released', JOB));

    process.kill(pair.replicaPid, 'SIGSTOP');
    try {
      // What the option narrows: without it, a lock the replica never saw is taken and its run starts.
      const plain = await startApp(uniquePrefix('replica-ack-plain'));
      await nextEvent(plain.history$, jobEvent('started', JOB));
      await plain.close();

      const skips = (await events(
        acked.events$,
        (event) => jobEvent('skipped', JOB)(event) && event.reason === 'provider-error',
        2,
      )) as LockEventOf<'skipped'>[];
      for (const skip of skips) {
        expect(skip.error).toBeInstanceOf(LockProviderUnavailableError);
        expect((skip.error as LockProviderUnavailableError).reason).toBe(
          '0 of 1 replicas acknowledged the lock within 200ms',
        );
      }
      const stoppedAt = skips[0].at;
      expect(acked.recorded.filter((event) => jobEvent('started', JOB)(event) && event.at >= stoppedAt)).toEqual([]);
      // The lock written on the primary is given back, not left to expire (in a minute).
      const task = jest.fn();
      const result = await acked
        .get(LockingTaskExecutor)
        .executeWithLock(task, { name: 'given-back', lockAtMostFor: '1m' });
      expect(result).toMatchObject({ executed: false, reason: 'provider-error' });
      expect(task).not.toHaveBeenCalled();
      await waitUntil(
        async () => (await primary.admin.exists(`${keyPrefix}:{given-back}`)) === 0,
        'the lock is released',
        {
          timeoutMs: 2_000,
        },
      );
    } finally {
      process.kill(pair.replicaPid, 'SIGCONT');
    }

    const resumed = await events(acked.events$, jobEvent('acquired', JOB), 3);
    for (const { fencingToken } of resumed) {
      // Acknowledged before the run started: the replica has the token already, however fast this reads it.
      expect(Number(await replica.admin.get(fenceKey))).toBeGreaterThanOrEqual(fencingToken!);
    }
  });

  it('rides a failover: skips ticks while the promoted replica has no replica of its own, then locks above every earlier token', async () => {
    const keyPrefix = uniquePrefix('replica-ack-failover');
    const app = await startApp(keyPrefix, { minReplicasToAck: 1, replicaAckTimeout: '200ms' });
    await nextEvent(app.history$, jobEvent('released', JOB));
    const unacknowledged = nextEvent(
      app.events$,
      (event) =>
        jobEvent('skipped', JOB)(event) &&
        (event.error as LockProviderUnavailableError | undefined)?.reason ===
          '0 of 1 replicas acknowledged the lock within 200ms',
      30_000,
    );

    await expectLocksThroughFailover({
      ...pair.failover(app, JOB, keyPrefix),
      // The promoted replica has no replica: no lock is taken until the old primary is back, as its replica.
      afterPromotion: async () => {
        await unacknowledged;
        await primary.server.start();
      },
    });
  });
});
