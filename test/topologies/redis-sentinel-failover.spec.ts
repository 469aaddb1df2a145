import { Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import { SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { expectLocksThroughFailover } from './failover.js';
import { useSentinelPair } from './sentinel-pair.js';

const JOB = 'failover-interval';

@Injectable()
class FailoverJobs {
  @SchedulerLock()
  @Interval(JOB, 100)
  tick() {}
}

const pair = useSentinelPair();

afterEach(closeSchedulerApps);

describe('SchedulerLockModule through a Sentinel failover', () => {
  it('skips ticks as store errors while no primary answers, then locks on the promoted replica with fencing tokens above every earlier one', async () => {
    const keyPrefix = uniquePrefix('sentinel-failover');
    const app = await startSchedulerApp({
      lock: {
        redis: pair.sentinel.clientOptions,
        keyPrefix,
        defaultLockAtMostFor: '10s',
        node: 'failover-app',
        acquireTimeout: '500ms',
      },
      providers: [FailoverJobs],
    });
    await nextEvent(app.history$, jobEvent('released', JOB));

    await expectLocksThroughFailover(pair.failover(app, JOB, keyPrefix));
  });
});
