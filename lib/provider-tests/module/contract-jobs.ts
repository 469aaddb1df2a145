import { strict as assert } from 'node:assert';
import { Inject, Injectable, type Type } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { currentLock } from '../../core/task/lock-context.js';
import { LockEvents, type LockEvent } from '../../core/task/lock-events.js';
import type { LockProvider } from '../../core/provider/lock-provider.js';
import { SchedulerLock } from '../../nest/scheduler-lock.decorator.js';
import { isLocked } from '../lock-probes.js';
import type { KitClock } from '../provider-subject.js';

/** The Nest token of the kit's clock in a kit app, which its jobs wait on. */
export const KIT_CLOCK = Symbol('KIT_CLOCK');

/** What a locked run saw: the name of the lock it ran under, and whether another node found that lock held. */
export interface ObservedRun {
  readonly lockName: string | undefined;
  readonly heldElsewhere: boolean;
}

/** The names of one app's jobs (and so of their locks): unique per app, so apps on one store never meet. */
export interface ContractJobNames {
  readonly cron: string;
  readonly interval: string;
  readonly timeout: string;
}

/** Every lock event of an app since its jobs were built, and a way to wait for the ones a check expects. */
export interface RecordedLockEvents {
  readonly recorded: LockEvent[];
  /**
   * Resolves with the first `count` events matching `match` (`what`), counting those already recorded;
   * fails after `ms` of the kit's clock without them.
   */
  events(match: (event: LockEvent) => boolean, count: number, what: string, ms?: number): Promise<LockEvent[]>;
}

/** What the jobs of an app recorded: their runs, and every lock event since the app was built. */
export interface ContractJobs extends RecordedLockEvents {
  readonly runs: Map<string, ObservedRun[]>;
}

/** Records an app's lock events: the base of a kit app's jobs, built before the app schedules anything. */
@Injectable()
export class LockEventRecorder implements RecordedLockEvents {
  readonly recorded: LockEvent[] = [];

  // Built before the app schedules anything: no event of a first tick is missed.
  constructor(
    lockEvents: LockEvents,
    @Inject(KIT_CLOCK) private readonly clock: KitClock,
  ) {
    lockEvents.events$.subscribe((event) => this.recorded.push(event));
  }

  // Looks on the kit's clock: a fake one moves only while the kit sleeps on it.
  async events(match: (event: LockEvent) => boolean, count: number, what: string, ms = 10_000): Promise<LockEvent[]> {
    const deadline = this.clock.now() + ms;
    for (;;) {
      const found = this.recorded.filter(match);
      if (found.length >= count) return found.slice(0, count);
      if (this.clock.now() >= deadline) {
        throw new assert.AssertionError({ message: `expected ${count} ${what} within ${ms} ms, saw ${found.length}` });
      }
      await this.clock.sleep(10);
    }
  }
}

export function contractJobs(names: ContractJobNames, other: LockProvider): Type<ContractJobs> {
  @Injectable()
  class Jobs extends LockEventRecorder implements ContractJobs {
    readonly runs = new Map<string, ObservedRun[]>();

    @Cron('* * * * * *', { name: names.cron })
    @SchedulerLock({ occurrence: false })
    cron() {
      return this.observe(names.cron);
    }

    @Interval(names.interval, 300)
    @SchedulerLock()
    interval() {
      return this.observe(names.interval);
    }

    @Timeout(names.timeout, 0)
    @SchedulerLock()
    timeout() {
      return this.observe(names.timeout);
    }

    private async observe(job: string): Promise<void> {
      const lockName = currentLock()?.name;
      const heldElsewhere = await isLocked(other, job);
      this.runs.set(job, [...(this.runs.get(job) ?? []), { lockName, heldElsewhere }]);
    }
  }
  return Jobs;
}
