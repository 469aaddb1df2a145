import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { filter, firstValueFrom, merge } from 'rxjs';
import { currentLock, SchedulerLock, type LockEvent, type SchedulerLockModuleOptions } from '../../lib/index.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { deferred } from '../support/wait-until.js';

/** Long enough that a loaded machine renews it in time (a 500 ms lease was lost under a full test run). */
const LEASE = 1_500;

/** A store a test started on its own, which it can take down and bring back. */
export interface StoreWithOutages {
  /** The module's lock options of node `node`. */
  lockOptions(node: string): Promise<SchedulerLockModuleOptions>;
  /** Takes the store down (killed, stopped or paused): no call gets an answer until {@link recover}. */
  outage(): Promise<void>;
  /** Brings the store back, with the data it held, and waits until it answers. */
  recover(): Promise<void>;
  /** The job record of the lock named `name`, as the store holds it. */
  readRecord(name: string): Promise<{ state: string; node: string; attempt: number } | undefined>;
  /** Ends the clients the test opened and stops the store, down or not. */
  stop(): Promise<void>;
}

/** The runs of the job, by occurrence, and a gate that holds every run until the test opens it. */
const runs = new Map<number, string[]>();
let gate = deferred<void>();

@Injectable()
class Report {
  // Every 20 s: the outage, the restart and the recovery grace (5 s) all fit well before the next occurrence,
  // past which a re-run would not start anyway (and the test could not fail).
  @SchedulerLock({ keepAlive: { lease: LEASE }, onCrash: 'rerun' })
  @Cron('*/20 * * * * *', { name: 'report' })
  async run() {
    const { occurrence, node } = currentLock()!;
    runs.set(occurrence!.getTime(), [...(runs.get(occurrence!.getTime()) ?? []), node]);
    await gate.promise;
  }
}

const of = (type: LockEvent['type'], node?: string) => (event: LockEvent) =>
  event.type === type && event.jobName === 'report' && (node === undefined || event.node === node);

/**
 * Issue seen in a soak: a keepAlive run with `onCrash: 'rerun'` ended 1 s after Redis was killed, so
 * its release (which records the outcome) failed; Redis came back from its AOF with the lease expired
 * and the record still saying running, and another node re-ran the finished occurrence. Now the run's
 * node records the outcome as soon as the store answers, and the other node waits the recovery grace.
 * `startStore` starts the store of one test; `outage` names how it goes down.
 */
export function describeFinishedRunNotRerun(
  storeName: string,
  outages: readonly string[],
  startStore: (outage: string) => Promise<StoreWithOutages>,
): void {
  describe.each(outages)(`an occurrence whose run ended while ${storeName} was down (%s)`, (outage) => {
    let store: StoreWithOutages;
    let apps: SchedulerApp[];

    beforeEach(async () => {
      runs.clear();
      gate = deferred<void>();
      store = await startStore(outage);
      apps = await Promise.all(
        ['node-a', 'node-b'].map(async (node) =>
          startSchedulerApp({ lock: await store.lockOptions(node), providers: [Report] }),
        ),
      );
    });

    afterEach(async () => {
      gate.resolve();
      await closeSchedulerApps();
      await store.stop();
    });

    it(`is recorded by its node once ${storeName} is back, and never re-run by the node watching it`, async () => {
      const history$ = merge(...apps.map((app) => app.history$));
      const started = await nextEvent(history$, of('started'), 25_000);
      const runner = started.node;
      const watcher = runner === 'node-a' ? 'node-b' : 'node-a';
      await nextEvent(history$, of('skipped', watcher), 5_000); // already-ran, running: it watches the occurrence

      await store.outage();
      const releaseFailed = nextEvent(history$, of('release-failed', runner));
      gate.resolve(); // the run ends while the store is down
      expect(await releaseFailed).toMatchObject({ reason: 'provider-error' });

      // Back once the lease ran out: the lock is gone, the record says running.
      await new Promise((resolve) => setTimeout(resolve, 2 * LEASE));
      // Awaited with no timer of their own: a restart on a busy machine takes seconds, and the test's limit bounds it.
      const live$ = merge(...apps.map((app) => app.events$));
      const recorded = firstValueFrom(live$.pipe(filter(of('release-failed', runner))));
      const watchEnds = firstValueFrom(
        live$.pipe(
          filter(
            (event) =>
              of('started', watcher)(event) ||
              (of('skipped', watcher)(event) && 'reason' in event && event.reason === 'already-ran'),
          ),
        ),
      );
      await store.recover();

      // First: an outcome never recorded then fails as what it causes, the watcher re-running the occurrence.
      expect(await watchEnds).toMatchObject({ type: 'skipped', reason: 'already-ran' });
      expect(await recorded).toMatchObject({ reason: 'expired' }); // the lock expired, the record is still its run's
      expect([...runs.values()]).toEqual([[runner]]);
      expect(await store.readRecord('report')).toMatchObject({ state: 'succeeded', node: runner, attempt: 1 });
      // Nest's Logger override is process-wide: the line is in whichever app set it last.
      expect(apps.flatMap((app) => app.logs.texts('warn')).join('\n')).toMatch(
        /Lock "report" \(job "report"\) was gone \(expired\) when the store answered again; its run's outcome \(succeeded\) was recorded/,
      );
    }, 60_000);
  });
}
