import { Injectable } from '@nestjs/common';
import { Cron, type CronOptions } from '@nestjs/schedule';
import { CronJob, CronTime } from 'cron';
import {
  currentLock,
  InMemoryLockProvider,
  LockedJobRegistry,
  SchedulerLock,
  SchedulerLockConfigurationError,
} from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';

/**
 * `cron` fires a job inside its constructor when the first fire time passed while the job started
 * (`Missed execution deadline by 4ms … Executing immediately`). In a real app that takes a boot that
 * ends a few ms before a whole second; here cron's own `CronTime.getTimeout()` reports that 4 ms miss
 * for the next start, and cron's own code fires the tick, before `SchedulerRegistry.addCronJob`.
 */
function missTheNextStartBy4ms(): void {
  const getTimeout = CronTime.prototype.getTimeout;
  CronTime.prototype.getTimeout = function missedOnce(this: CronTime) {
    CronTime.prototype.getTimeout = getTimeout;
    return -4;
  };
}

/** Every run of the jobs, and whether it ran under its lock. */
const runs: Array<{ job: string; locked: boolean }> = [];
function record(job: string): void {
  runs.push({ job, locked: currentLock()?.name === job });
}

beforeEach(() => {
  runs.length = 0;
});
afterEach(closeSchedulerApps);

function startApp(...providers: Array<new (...args: never[]) => unknown>): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '10s' },
    providers,
  });
}

@Injectable()
class NoJobs {}

/** A runtime cron job `name` recording its runs, declared to the app's LockedJobRegistry, for `addCronJob`. */
function declaredRuntimeJob(app: SchedulerApp, name: string, cronTime: string, start: boolean): CronJob {
  app.get(LockedJobRegistry).declare(name, { lockAtMostFor: '5s' });
  return CronJob.from({ cronTime, onTick: () => record(name), start });
}

describe('a tick cron fires while the job is being created', () => {
  @Injectable()
  class Minutely {
    // Every minute: the only tick within the test is the one fired in the constructor.
    @SchedulerLock()
    @Cron('0 * * * * *', { name: 'minutely' })
    tick() {
      record('minutely');
    }
  }

  it("runs a decorated job's constructor tick under its lock, once the job is registered", async () => {
    const app = startApp(Minutely);
    missTheNextStartBy4ms();
    const started = await app;
    await nextEvent(started.history$, jobEvent('released', 'minutely'));

    expect(runs).toEqual([{ job: 'minutely', locked: true }]);
  });

  @Injectable()
  class RunsOnInit {
    // cron's runOnInit fires inside the constructor on every start, whatever the timing.
    @SchedulerLock()
    @Cron('0 0 1 1 *', { name: 'on-init', runOnInit: true } as CronOptions)
    tick() {
      record('on-init');
    }
  }

  it("runs a decorated job's runOnInit tick under its lock", async () => {
    const app = await startApp(RunsOnInit);
    await nextEvent(app.history$, jobEvent('released', 'on-init'));

    expect(runs).toEqual([{ job: 'on-init', locked: true }]);
  });

  it('locks a runtime job created with start: false from its first tick, even one fired by start()', async () => {
    const app = await startApp(NoJobs);
    const job = declaredRuntimeJob(app, 'runtime', '0 * * * * *', false);
    app.registry.addCronJob('runtime', job);
    missTheNextStartBy4ms();
    job.start();
    await nextEvent(app.history$, jobEvent('released', 'runtime'));

    expect(runs).toEqual([{ job: 'runtime', locked: true }]);
  });

  it('refuses a locked runtime job started before addCronJob, naming the job and the fix, and stops it', async () => {
    const app = await startApp(NoJobs);
    const job = declaredRuntimeJob(app, 'started-early', '0 0 1 1 *', true);

    let refusal: unknown;
    try {
      app.registry.addCronJob('started-early', job);
    } catch (error) {
      refusal = error;
    }
    expect(refusal).toBeInstanceOf(SchedulerLockConfigurationError);
    expect((refusal as Error).message).toMatch(
      /Cannot lock job "started-early".*started \(or ran\) before addCronJob; create it with start: false and call job\.start\(\) after addCronJob/,
    );
    expect(job.isActive).toBe(false);
    expect(app.registry.doesExist('cron', 'started-early')).toBe(false);
  });
});
