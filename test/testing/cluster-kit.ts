import { Injectable, type OnModuleInit, type Provider, type Type } from '@nestjs/common';
import { Cron, Interval, ScheduleModule, SchedulerRegistry, Timeout } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { currentLock, LockedJobRegistry, SchedulerLock, SchedulerLockModule } from '../../lib/index.js';
import { SchedulerLockTest, type TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { CapturedLogger } from '../support/captured-logger.js';

/** New Year's midnight, UTC: the fire time of the yearly job, which no real timer reaches during a test. */
export const NEW_YEAR = new Date('2027-01-01T00:00:00Z');

/** Each run of a job of {@link Jobs}, as `<job> on <node>`, in order; emptied by {@link closeNodes}. */
export const handled: string[] = [];

/** Notes a run of `job` on the node whose lock it holds. */
function note(job: string): void {
  handled.push(`${job} on ${currentLock()!.node}`);
}

/**
 * A provider that declares the lock of `runtime-sweep` and adds it as an hourly interval of its own, calling
 * `callback`: a locked timer the app adds itself.
 */
export function runtimeSweep(callback: () => unknown): Type<OnModuleInit> {
  @Injectable()
  class RuntimeSweep implements OnModuleInit {
    constructor(
      private readonly registry: SchedulerRegistry,
      private readonly locks: LockedJobRegistry,
    ) {}

    onModuleInit() {
      this.locks.declare('runtime-sweep', { lockAtMostFor: '1m' });
      this.registry.addInterval('runtime-sweep', setInterval(callback, 3_600_000));
    }
  }
  return RuntimeSweep;
}

/** The jobs every node of the test cluster runs; each run is noted in {@link handled}. */
@Injectable()
export class Jobs {
  /** Once per occurrence (a cron job's default). */
  @SchedulerLock({ lockAtMostFor: '10m' })
  @Cron('0 0 0 1 1 *', { name: 'yearly', timeZone: 'UTC' })
  yearly() {
    note('yearly');
  }

  /** A plain lock: "not at the same time", so two nodes ticking one after the other both run it. */
  @SchedulerLock({ lockAtMostFor: '10m', occurrence: false })
  @Cron('0 0 0 1 1 *', { name: 'unclaimed', timeZone: 'UTC' })
  unclaimed() {
    note('unclaimed');
  }

  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('0 0 0 1 1 *', { name: 'failing', timeZone: 'UTC' })
  failing() {
    throw new Error('boom: the ledger is locked');
  }

  @SchedulerLock({ lockAtMostFor: '10m', lockAtLeastFor: '5m' })
  @Interval('sweep', 3_600_000)
  sweep() {
    note('sweep');
  }

  @SchedulerLock({ lockAtMostFor: '1m' })
  @Timeout('warm-up', 3_600_000)
  warmUp() {
    note('warm-up');
  }

  /** Runs until its lock is lost; 10 minutes at most, or a renewed 300 ms lease. */
  @SchedulerLock({ lockAtMostFor: '10m' })
  @Interval('long', 3_600_000)
  long() {
    return untilLost();
  }

  @SchedulerLock({ lockAtMostFor: '10m', keepAlive: { lease: '300ms' } })
  @Interval('leased', 3_600_000)
  async leased() {
    handled.push(`leased lost: ${String(await untilLost())}`);
  }

  /** Re-run by another node if its node dies; on node-1 it never ends by itself, deaf to its signal. */
  @SchedulerLock({ lockAtMostFor: '10m', keepAlive: { lease: '3s' }, onCrash: 'rerun' })
  @Cron('0 0 0 1 1 *', { name: 'rerun', timeZone: 'UTC' })
  rerun() {
    if (currentLock()!.node !== 'node-1') return 'recovered';
    return new Promise<void>((resolve) => (crashedRun.release = resolve));
  }
}

/** Holds the run of `rerun` on node-1 until the test lets it go: that node "crashed" with the run. */
export const crashedRun = { release: () => {} };

/** Resolves to why the run's lock was lost, once its signal aborts. */
function untilLost(): Promise<unknown> {
  const { signal } = currentLock()!;
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(signal.reason)));
}

const open: TestingModule[] = [];

/**
 * A node of the test cluster on `store`; its module names a Redis that does not exist (the override drops it).
 * What the app logs goes to `logger`.
 */
export async function startNode(
  store: TestLockProvider,
  node: string,
  providers: Provider[] = [Jobs],
  logger = new CapturedLogger(),
) {
  const moduleRef = await SchedulerLockTest.override(
    Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRoot({ redis: 'redis://no-such-host.invalid:6379', defaultLockAtMostFor: '1m' }),
      ],
      providers,
    }).setLogger(logger),
    { store, node },
  ).compile();
  open.push(moduleRef);
  return SchedulerLockTest.node(moduleRef);
}

/** `count` nodes, `node-1`…, on `store`. */
export function startNodes(store: TestLockProvider, count: number): Promise<TestNode[]> {
  return Promise.all(Array.from({ length: count }, (_, i) => startNode(store, `node-${i + 1}`)));
}

export async function closeNodes(): Promise<void> {
  await Promise.all(open.splice(0).map((moduleRef) => moduleRef.close()));
  handled.length = 0;
}
