import { Injectable, type Type } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { currentLock } from '../../core/task/lock-context.js';
import { SchedulerLock } from '../../nest/scheduler-lock.decorator.js';
import type { SchedulerLockOptions } from '../../nest/scheduler-lock-options.interface.js';
import { LockEventRecorder } from './contract-jobs.js';

/** What a run of an occurrence job saw of its lock. */
export interface OccurrenceRun {
  readonly node: string | undefined;
  readonly occurrence: number | undefined;
  readonly catchUp: boolean;
  /** 2 and up for a re-run of an occurrence whose node died; 1 otherwise. */
  readonly attempt: number;
  readonly previousNode: string | undefined;
}

/** The kinds of cron job the occurrence checks run: their schedule and lock options. */
const KINDS = {
  /** Every second, once per occurrence. */
  everySecond: { cron: '* * * * * *', options: {} },
  /** On 1 January: no tick comes during a check, so only a catch-up runs it. */
  yearly: { cron: '0 0 0 1 1 *', options: { catchUp: { window: '400d' } } },
  /** Every 3 s: room between occurrences for a watcher to find a dead run and wait out its grace. */
  rerun: { cron: '*/3 * * * * *', options: { onCrash: 'rerun', recoveryGrace: '200ms' } },
  /** The same with a 300 ms lease: its watchers look every 100 ms, not every second. */
  rerunLeased: {
    cron: '*/3 * * * * *',
    options: { onCrash: 'rerun', recoveryGrace: '200ms', keepAlive: { lease: '300ms' } },
  },
} satisfies Record<string, { cron: string; options: SchedulerLockOptions }>;

export type OccurrenceJobKind = keyof typeof KINDS;

/**
 * A cron job of `kind` named `name` (its job and lock name), which adds each run to `runs`: one list for the
 * apps of a check, so that a run on any node shows.
 */
export function occurrenceJob(kind: OccurrenceJobKind, name: string, runs: OccurrenceRun[]): Type<LockEventRecorder> {
  const { cron, options } = KINDS[kind];

  @Injectable()
  class OccurrenceJobs extends LockEventRecorder {
    @Cron(cron, { name })
    @SchedulerLock({ name, ...options })
    tick() {
      const lock = currentLock()!;
      runs.push({
        node: lock.node,
        occurrence: lock.occurrence?.getTime(),
        catchUp: lock.catchUp,
        attempt: lock.recovery?.attempt ?? 1,
        previousNode: lock.recovery?.previousNode,
      });
    }
  }
  return OccurrenceJobs;
}
