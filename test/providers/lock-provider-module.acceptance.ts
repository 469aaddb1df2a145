import { Inject, Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { currentLock, LockingTaskExecutor, SchedulerLock, type LockProvider } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { useLockProviderNodes, type LockProviderFixture } from './lock-provider.acceptance.js';
import { isLocked, lockConfig, lockWhenFree, mustLock, uniqueLockName } from './lock-probes.js';

/** Another node on the provider's store, for the jobs to look at their own lock from outside. */
const OTHER_NODE = Symbol('OTHER_NODE');

/** What a locked run saw: the name of the lock it ran under, and whether another node found that lock held. */
interface ObservedRun {
  readonly lockName: string | undefined;
  readonly heldElsewhere: boolean;
}

const CRON = 'contract-cron';
const INTERVAL = 'contract-interval';
const TIMEOUT = 'contract-timeout';

/**
 * One job of each kind. The cron job opts out of once-per-occurrence locking, which needs the optional
 * `lockOccurrence()`; everything here needs only `lock()`, `unlock()` and `extend()`.
 */
@Injectable()
class ContractJobs {
  readonly runs = new Map<string, ObservedRun[]>();

  constructor(@Inject(OTHER_NODE) private readonly other: LockProvider) {}

  @Cron('* * * * * *', { name: CRON })
  @SchedulerLock({ occurrence: false })
  cron() {
    return this.observe(CRON);
  }

  @Interval(INTERVAL, 300)
  @SchedulerLock()
  interval() {
    return this.observe(INTERVAL);
  }

  @Timeout(TIMEOUT, 0)
  @SchedulerLock()
  timeout() {
    return this.observe(TIMEOUT);
  }

  private async observe(job: string): Promise<void> {
    const lockName = currentLock()?.name;
    const heldElsewhere = await isLocked(this.other, job);
    this.runs.set(job, [...(this.runs.get(job) ?? []), { lockName, heldElsewhere }]);
  }
}

/**
 * A provider through the module: `@Cron`, `@Interval` and `@Timeout` jobs and `executeWithLock` run under
 * its locks, skip while another node holds them, and release them — with nothing logged as an error or
 * a warning. Needs only the provider contract the README states (`lock()`, `unlock()`, `extend()`).
 */
export function describeLockProviderInModule(
  label: string,
  setup: () => LockProviderFixture | Promise<LockProviderFixture>,
): void {
  describe(`${label} through the module (LockProvider acceptance)`, () => {
    const nodes = useLockProviderNodes(setup, closeSchedulerApps);
    let app: SchedulerApp;

    beforeAll(async () => {
      app = await startSchedulerApp({
        lock: { provider: nodes.provider, defaultLockAtMostFor: '10s' },
        providers: [ContractJobs, { provide: OTHER_NODE, useValue: nodes.other }],
      });
    });

    afterEach(() => {
      expect(app.logs.texts('error')).toEqual([]);
      expect(app.logs.texts('warn')).toEqual([]);
    });

    it.each([CRON, INTERVAL])('runs the %s job under its lock on every tick, releasing it after each', async (job) => {
      // A second run under the same lock shows the first one released it (lockAtMostFor is 10 s).
      await events(app.history$, jobEvent('released', job), 2);

      expect(app.get(ContractJobs).runs.get(job)?.slice(0, 2)).toEqual([
        { lockName: job, heldElsewhere: true },
        { lockName: job, heldElsewhere: true },
      ]);
    });

    it('runs the timeout job once under its lock, and releases it', async () => {
      await nextEvent(app.history$, jobEvent('released', TIMEOUT));

      expect(app.get(ContractJobs).runs.get(TIMEOUT)).toEqual([{ lockName: TIMEOUT, heldElsewhere: true }]);
      expect(await isLocked(nodes.other, TIMEOUT)).toBe(false);
    });

    it('skips ticks while another node holds the lock, and runs again once it is released', async () => {
      // Between two runs: a run holds the lock while it looks at it from the other node.
      const { value: held } = await lockWhenFree(nodes.other, lockConfig(INTERVAL), performance.now() + 5_000);
      const skipped = await nextEvent(app.events$, jobEvent('skipped', INTERVAL));
      await held.unlock();
      await nextEvent(app.events$, jobEvent('released', INTERVAL));

      expect(skipped.reason).toBe('locked');
    });

    it('runs executeWithLock tasks under the lock, extends and releases it, skips it held elsewhere', async () => {
      const executor = app.get(LockingTaskExecutor);
      const name = uniqueLockName('execute');

      const outcome = await executor.executeWithLock(
        async () => {
          const lock = currentLock()!;
          const heldBefore = await isLocked(nodes.other, name);
          await lock.extend('20s');
          return { lockName: lock.name, heldBefore, heldAfterExtend: await isLocked(nodes.other, name) };
        },
        { name, lockAtMostFor: '5s' },
      );

      expect(outcome).toEqual({ executed: true, result: { lockName: name, heldBefore: true, heldAfterExtend: true } });
      expect(await isLocked(nodes.other, name)).toBe(false);
      const held = await mustLock(nodes.other, lockConfig(name));
      const skipped = await executor.executeWithLock(() => 'ran', { name });
      expect(skipped).toEqual({ executed: false, reason: 'locked' });
      await held.unlock();
    });
  });
}
