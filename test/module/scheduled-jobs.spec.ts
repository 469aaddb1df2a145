import { jest } from '@jest/globals';
import { Injectable, type Type } from '@nestjs/common';
import { Cron, CronExpression, Interval, Timeout } from '@nestjs/schedule';
import { CronJob } from 'cron';
import { filter } from 'rxjs';
import { currentLock, LockAssert, LockedJobRegistry, SchedulerLock } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { runClockUntil } from '../support/fake-clock.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { deferred, waitUntil } from '../support/wait-until.js';
import { RunRecorder } from './support/run-recorder.js';

const NODE = 'this-node';

/** The cluster's store: this node's app, and another node's locks. */
const store = new TestLockProvider();
/** Another node, to ask whether a lock is held without changing it. */
const otherNode = store.provider('other-node');
let recorder: RunRecorder;
// On fake time, the jobs' timers too: the module's wiring of jobs and locks is the subject, not a store.
beforeEach(() => {
  jest.useFakeTimers();
  recorder = new RunRecorder((name) => isLocked(otherNode, name));
});
afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
  store.reset();
});

/** An app running `jobs` with locks in the test store, as node {@link NODE}. */
function startJobs(...jobs: Type[]): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: { provider: store.provider(NODE), defaultLockAtMostFor: '10s' },
    providers: [...jobs, { provide: RunRecorder, useValue: recorder }],
  });
}

/** Runs the fake clock until `condition` holds. */
async function clockUntil(condition: () => boolean): Promise<void> {
  while (!condition()) await jest.advanceTimersByTimeAsync(10);
}

interface ExpectedLockedRun {
  /** The label the handler records its runs under: `Class.method`. */
  method: string;
  /** Its name in `SchedulerRegistry` and in lock events. */
  jobName: string;
  lockName: string;
}

/** Waits for the job's first run and checks it went through its lock, from outside and from inside. */
async function expectLockedRun(app: SchedulerApp, { method, jobName, lockName }: ExpectedLockedRun): Promise<void> {
  const acquired = await runClockUntil(nextEvent(app.history$, jobEvent('acquired', jobName)));
  expect(acquired).toMatchObject({ lockName, node: NODE });
  await runClockUntil(nextEvent(app.history$, jobEvent('released', jobName)));
  const firstRun = app.recorded.filter((event) => event.jobName === jobName).slice(0, 5);
  expect(firstRun.map(({ type }) => type)).toEqual(['attempt', 'acquired', 'started', 'finished', 'released']);
  expect(firstRun.every((event) => event.lockName === lockName)).toBe(true);

  const [run] = recorder.runsOf(method);
  expect(run.lockName).toBe(lockName);
  expect(run.lockHeld).toBe(true);
}

@Injectable()
class EveryKindOfJob {
  constructor(private readonly recorder: RunRecorder) {}

  @SchedulerLock()
  @Cron(CronExpression.EVERY_SECOND)
  cronLockAbove() {
    return this.recorder.record('EveryKindOfJob.cronLockAbove');
  }

  @Cron(CronExpression.EVERY_SECOND)
  @SchedulerLock()
  cronLockBelow() {
    return this.recorder.record('EveryKindOfJob.cronLockBelow');
  }

  @SchedulerLock()
  @Interval(100)
  intervalLockAbove() {
    return this.recorder.record('EveryKindOfJob.intervalLockAbove');
  }

  @Interval(100)
  @SchedulerLock()
  intervalLockBelow() {
    return this.recorder.record('EveryKindOfJob.intervalLockBelow');
  }

  @SchedulerLock()
  @Timeout(50)
  timeoutLockAbove() {
    return this.recorder.record('EveryKindOfJob.timeoutLockAbove');
  }

  @Timeout(50)
  @SchedulerLock()
  timeoutLockBelow() {
    return this.recorder.record('EveryKindOfJob.timeoutLockBelow');
  }
}

@Injectable()
class NamedJobs {
  constructor(private readonly recorder: RunRecorder) {}

  @SchedulerLock()
  @Cron(CronExpression.EVERY_SECOND, { name: 'report-cron' })
  namedCron() {
    return this.recorder.record('NamedJobs.namedCron');
  }

  @SchedulerLock()
  @Interval('report-interval', 100)
  namedInterval() {
    return this.recorder.record('NamedJobs.namedInterval');
  }

  @SchedulerLock()
  @Timeout('report-timeout', 50)
  namedTimeout() {
    return this.recorder.record('NamedJobs.namedTimeout');
  }

  @SchedulerLock({ name: 'lock-of-named-job' })
  @Interval('renamed-interval', 100)
  namedJobOwnLock() {
    return this.recorder.record('NamedJobs.namedJobOwnLock');
  }

  @SchedulerLock({ name: 'lock-of-unnamed-job' })
  @Interval(100)
  unnamedJobOwnLock() {
    return this.recorder.record('NamedJobs.unnamedJobOwnLock');
  }
}

describe('@SchedulerLock on @nestjs/schedule jobs', () => {
  it('runs cron, interval and timeout jobs under their lock, with @SchedulerLock above or below the schedule decorator', async () => {
    const app = await startJobs(EveryKindOfJob);

    const methods = [
      'cronLockAbove',
      'cronLockBelow',
      'intervalLockAbove',
      'intervalLockBelow',
      'timeoutLockAbove',
      'timeoutLockBelow',
    ];
    await Promise.all(
      methods.map((method) => {
        const name = `EveryKindOfJob.${method}`;
        return expectLockedRun(app, { method: name, jobName: name, lockName: name });
      }),
    );
    // Unnamed jobs are registered under their lock name, not under @nestjs/schedule's random UUID.
    expect([...app.registry.getCronJobs().keys()]).toEqual(
      expect.arrayContaining(['EveryKindOfJob.cronLockAbove', 'EveryKindOfJob.cronLockBelow']),
    );
    expect(app.registry.getIntervals()).toEqual(
      expect.arrayContaining(['EveryKindOfJob.intervalLockAbove', 'EveryKindOfJob.intervalLockBelow']),
    );
    expect(app.registry.getTimeouts()).toEqual(
      expect.arrayContaining(['EveryKindOfJob.timeoutLockAbove', 'EveryKindOfJob.timeoutLockBelow']),
    );
  });

  it("keeps a named job's name and uses it as the lock name, unless @SchedulerLock({ name }) sets another", async () => {
    const app = await startJobs(NamedJobs);

    await Promise.all([
      expectLockedRun(app, { method: 'NamedJobs.namedCron', jobName: 'report-cron', lockName: 'report-cron' }),
      expectLockedRun(app, {
        method: 'NamedJobs.namedInterval',
        jobName: 'report-interval',
        lockName: 'report-interval',
      }),
      expectLockedRun(app, { method: 'NamedJobs.namedTimeout', jobName: 'report-timeout', lockName: 'report-timeout' }),
      expectLockedRun(app, {
        method: 'NamedJobs.namedJobOwnLock',
        jobName: 'renamed-interval',
        lockName: 'lock-of-named-job',
      }),
      expectLockedRun(app, {
        method: 'NamedJobs.unnamedJobOwnLock',
        jobName: 'NamedJobs.unnamedJobOwnLock',
        lockName: 'lock-of-unnamed-job',
      }),
    ]);
    expect([...app.registry.getCronJobs().keys()]).toEqual(['report-cron']);
    expect(app.registry.getIntervals().sort()).toEqual([
      'NamedJobs.unnamedJobOwnLock',
      'renamed-interval',
      'report-interval',
    ]);
    expect(app.registry.getTimeouts()).toEqual(['report-timeout']);
  });

  it('does not lock a direct call of a locked method', async () => {
    @Injectable()
    class DirectlyCalledJob {
      constructor(private readonly recorder: RunRecorder) {}

      @SchedulerLock()
      @Interval(60_000)
      refresh() {
        return this.recorder.record('DirectlyCalledJob.refresh');
      }
    }
    const app = await startJobs(DirectlyCalledJob);

    await app.get(DirectlyCalledJob).refresh();

    expect(recorder.runs).toEqual([{ job: 'DirectlyCalledJob.refresh', lockName: undefined, lockHeld: false }]);
    expect(app.recorded).toEqual([]);
  });

  it('skips a tick whose lock another node holds, without running the handler or logging an error', async () => {
    @Injectable()
    class ContendedJob {
      constructor(private readonly recorder: RunRecorder) {}

      @SchedulerLock()
      @Interval(100)
      tick() {
        return this.recorder.record('ContendedJob.tick');
      }
    }
    const held = await store.hold('ContendedJob.tick', { as: 'other-node', for: 10_000 });

    const app = await startJobs(ContendedJob);
    const skipped = await runClockUntil(events(app.history$, jobEvent('skipped', 'ContendedJob.tick'), 3));

    expect(skipped.map((event) => event.type === 'skipped' && event.reason)).toEqual(['locked', 'locked', 'locked']);
    expect(recorder.runs).toEqual([]);
    expect(app.logs.lines('error')).toEqual([]);

    // The same job runs as soon as the other node lets go: it was skipped for the lock alone.
    await held.release();
    await runClockUntil(nextEvent(app.history$, jobEvent('released', 'ContendedJob.tick')));
    expect(recorder.runsOf('ContendedJob.tick')[0].lockName).toBe('ContendedJob.tick');
  });

  it('keeps the lock of an async handler until its promise settles', async () => {
    @Injectable()
    class SlowJob {
      readonly gate = deferred();
      readonly timeline: string[] = [];

      @SchedulerLock()
      @Interval(100)
      async tick() {
        await this.gate.promise;
        this.timeline.push('handler settled');
      }
    }
    const app = await startJobs(SlowJob);
    const job = app.get(SlowJob);
    app.events$.pipe(filter(jobEvent('released', 'SlowJob.tick'))).subscribe(() => job.timeline.push('released'));

    await runClockUntil(nextEvent(app.history$, jobEvent('started', 'SlowJob.tick')));
    // Later ticks find the lock taken while the first run's promise is pending.
    const skipped = await runClockUntil(events(app.history$, jobEvent('skipped', 'SlowJob.tick'), 2));
    expect(skipped.map((event) => event.type === 'skipped' && event.reason)).toEqual(['locked', 'locked']);
    expect(await isLocked(otherNode, 'SlowJob.tick')).toBe(true);
    expect(job.timeline).toEqual([]);

    job.gate.resolve();
    await runClockUntil(nextEvent(app.history$, jobEvent('released', 'SlowJob.tick')));
    expect(job.timeline.slice(0, 2)).toEqual(['handler settled', 'released']);
  });

  it("logs a handler's error under the 'Scheduler' context, releases the lock and runs the next tick", async () => {
    @Injectable()
    class FailingJob {
      runs = 0;

      @SchedulerLock()
      @Interval(100)
      tick() {
        this.runs += 1;
        throw new Error(`tick ${this.runs} failed`);
      }
    }
    const app = await startJobs(FailingJob);

    const released = await runClockUntil(events(app.history$, jobEvent('released', 'FailingJob.tick'), 2));

    expect(released).toHaveLength(2);
    const finished = app.recorded.filter(jobEvent('finished', 'FailingJob.tick'));
    expect((finished[0].error as Error).message).toBe('tick 1 failed');
    const [firstError] = app.logs.lines('error');
    expect(firstError).toMatchObject({
      context: 'Scheduler',
      message: expect.objectContaining({ message: 'tick 1 failed' }),
    });
    expect(app.logs.texts('error').filter((text) => text === 'tick 1 failed')).toHaveLength(1);
  });

  it('leaves @Interval jobs without @SchedulerLock alone in the same app', async () => {
    @Injectable()
    class MixedJobs {
      readonly unlockedRuns: (string | undefined)[] = [];

      @SchedulerLock()
      @Interval(50)
      locked() {}

      @Interval(50)
      unlocked() {
        this.unlockedRuns.push(currentLock()?.name);
      }
    }
    const app = await startJobs(MixedJobs);
    const job = app.get(MixedJobs);

    await clockUntil(() => job.unlockedRuns.length >= 3);
    await runClockUntil(nextEvent(app.history$, jobEvent('released', 'MixedJobs.locked')));

    expect(job.unlockedRuns.every((lockName) => lockName === undefined)).toBe(true);
    expect(app.recorded.every((event) => event.jobName === 'MixedJobs.locked')).toBe(true);
    // Still under the name @nestjs/schedule gave it.
    expect(app.registry.getIntervals()).not.toContain('MixedJobs.unlocked');
    expect(app.registry.getIntervals()).toHaveLength(2);
  });

  it('passes LockAssert.assertLocked() inside a locked handler, and only there', async () => {
    @Injectable()
    class AssertingJob {
      readonly outcomes: string[] = [];

      @SchedulerLock()
      @Timeout(20)
      check() {
        LockAssert.assertLocked();
        this.outcomes.push('asserted');
      }
    }
    const app = await startJobs(AssertingJob);

    const finished = await runClockUntil(nextEvent(app.history$, jobEvent('finished', 'AssertingJob.check')));

    expect(finished.error).toBeNull();
    expect(app.get(AssertingJob).outcomes).toEqual(['asserted']);
    expect(() => app.get(AssertingJob).check()).toThrow(/not running under a scheduler lock/);
  });
});

describe('jobs added to SchedulerRegistry at runtime', () => {
  @Injectable()
  class NoJobs {}

  it('locks a cron job declared in LockedJobRegistry before addCronJob', async () => {
    const app = await startJobs(NoJobs);

    app.get(LockedJobRegistry).declare('runtime-cron', { lockAtMostFor: '5s' });
    const job = new CronJob(CronExpression.EVERY_SECOND, () => recorder.record('runtime-cron'));
    app.registry.addCronJob('runtime-cron', job);
    job.start();

    await expectLockedRun(app, { method: 'runtime-cron', jobName: 'runtime-cron', lockName: 'runtime-cron' });
  });

  it('locks a one-shot cron job scheduled at a date, claiming that date as its occurrence', async () => {
    const app = await startJobs(NoJobs);

    app.get(LockedJobRegistry).declare('one-shot', { lockAtMostFor: '5s' });
    // Fired by hand, well before its date: cron's own timer for a one-shot date can throw "Date in past"
    // when it wakes in the millisecond of the date (cron 4), which is no part of what is tested here.
    const fireAt = new Date(Date.now() + 60_000);
    let occurrence: Date | null | undefined;
    const job = new CronJob(fireAt, () => {
      occurrence = currentLock()?.occurrence;
      return recorder.record('one-shot');
    });
    app.registry.addCronJob('one-shot', job);
    void job.fireOnTick();

    await expectLockedRun(app, { method: 'one-shot', jobName: 'one-shot', lockName: 'one-shot' });
    expect(occurrence).toEqual(fireAt);
  });

  it('locks declared intervals and timeouts, under the declared lock name, and leaves undeclared ones alone', async () => {
    jest.useRealTimers(); // addInterval and addTimeout lock Node's own timers, which fake ones are not
    const app = await startJobs(NoJobs);
    const locks = app.get(LockedJobRegistry);

    locks.declare('runtime-interval', { name: 'runtime-interval-lock' });
    app.registry.addInterval(
      'runtime-interval',
      setInterval(() => recorder.record('runtime-interval'), 100),
    );
    locks.declare('runtime-timeout');
    app.registry.addTimeout(
      'runtime-timeout',
      setTimeout(() => recorder.record('runtime-timeout'), 50),
    );
    app.registry.addInterval(
      'undeclared-interval',
      setInterval(() => recorder.record('undeclared-interval'), 50),
    );

    await Promise.all([
      expectLockedRun(app, {
        method: 'runtime-interval',
        jobName: 'runtime-interval',
        lockName: 'runtime-interval-lock',
      }),
      expectLockedRun(app, { method: 'runtime-timeout', jobName: 'runtime-timeout', lockName: 'runtime-timeout' }),
      waitUntil(() => recorder.runsOf('undeclared-interval').length >= 2, 'the undeclared interval ran twice'),
    ]);
    expect(recorder.runsOf('undeclared-interval').map(({ lockName }) => lockName)).toEqual(
      recorder.runsOf('undeclared-interval').map(() => undefined),
    );
    expect(app.recorded.filter((event) => event.jobName === 'undeclared-interval')).toEqual([]);
  });
});
