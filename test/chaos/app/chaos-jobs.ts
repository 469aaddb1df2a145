import { setTimeout as sleep } from 'node:timers/promises';
import {
  Inject,
  Injectable,
  type OnApplicationBootstrap,
  type OnApplicationShutdown,
  type OnModuleInit,
} from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import {
  currentLock,
  LockEvents,
  LockingTaskExecutor,
  LockLostError,
  SchedulerLock,
  type LockEvent,
} from 'nest-scheduler-lock';
import { CHAOS_ELECTION, type ChaosJob } from '../journal.js';
import { AppJournal, describe } from './app-journal.js';

/**
 * How long each job's work takes (a timer: the event loop stays free, the machine is shared). The
 * report outlasts its 3 s lease, so every run renews it, and a fault during a run can cost the lease.
 */
const WORK_MS: Record<ChaosJob, number> = { tick: 100, report: 4_500, sweep: 150, ledger: 200, beacon: 100 };
/** Pause between two `executeWithLock` calls of the ledger loop: 300–600 ms. */
const LEDGER_PAUSE_MS = [300, 600] as const;

/**
 * The jobs of every chaos app, the same on each: a 1 s cron, a 10 s cron with a renewing lease that is
 * re-run when its node dies, a 700 ms interval, an `executeWithLock` loop, and a 2 s cron on the leader. Each run journals its
 * start (with what `currentLock()` says) and end; a handler stops as soon as its lock's signal aborts.
 */
@Injectable()
export class ChaosJobs implements OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private runs = 0;
  private ledgerLoop = true;

  constructor(
    @Inject(AppJournal) private readonly journal: AppJournal,
    @Inject(LockingTaskExecutor) private readonly executor: LockingTaskExecutor,
    @Inject(LockEvents) private readonly lockEvents: LockEvents,
  ) {}

  @Cron('* * * * * *', { name: 'tick' })
  @SchedulerLock({ lockAtMostFor: '3s' })
  tick(): Promise<void> {
    return this.journaledRun('tick');
  }

  @Cron('*/10 * * * * *', { name: 'report' })
  @SchedulerLock({ lockAtMostFor: '30s', keepAlive: { lease: '3s' }, onCrash: 'rerun' })
  report(): Promise<void> {
    return this.journaledRun('report');
  }

  // A long lockAtMostFor: a lock a given-up claim took during a store pause would block it for a minute.
  @Interval('sweep', 700)
  @SchedulerLock({ lockAtMostFor: '60s', lockAtLeastFor: '500ms' })
  sweep(): Promise<void> {
    return this.journaledRun('sweep');
  }

  // Its occurrences must stay once each across the handovers the faults cause.
  @Cron('*/2 * * * * *', { name: 'beacon' })
  @SchedulerLock({ lockAtMostFor: '3s', leader: CHAOS_ELECTION.name })
  beacon(): Promise<void> {
    return this.journaledRun('beacon');
  }

  /** Subscribed before `@nestjs/schedule` starts any job (in `onApplicationBootstrap`). */
  onModuleInit(): void {
    this.lockEvents.events$.subscribe((event) => this.journalLockEvent(event));
  }

  onApplicationBootstrap(): void {
    void this.runLedgerLoop();
  }

  onApplicationShutdown(): void {
    this.ledgerLoop = false;
  }

  private async runLedgerLoop(): Promise<void> {
    while (this.ledgerLoop) {
      try {
        await this.executor.executeWithLock(() => this.journaledRun('ledger'), { name: 'ledger', lockAtMostFor: '3s' });
      } catch (error) {
        this.journal.write({
          type: 'log',
          level: 'error',
          context: 'ledger',
          message: `executeWithLock rejected: ${describe(error)}`,
        });
      }
      const [least, most] = LEDGER_PAUSE_MS;
      await sleep(least + Math.random() * (most - least));
    }
  }

  private async journaledRun(job: ChaosJob): Promise<void> {
    const lock = currentLock();
    const run = `${this.journal.node}:${process.pid}:${++this.runs}`;
    const fields = { run, job, lock: lock?.name ?? job };
    this.journal.write({
      type: 'start',
      ...fields,
      locked: lock !== undefined,
      wall: Date.now(),
      fencingToken: lock?.fencingToken ?? undefined,
      occurrence: lock?.occurrence?.getTime(),
      attempt: lock?.occurrence ? (lock.recovery?.attempt ?? 1) : undefined,
      previousNode: lock?.recovery?.previousNode,
    });
    const signal = lock?.signal;
    const onAbort = () => this.journal.write({ type: 'abort', ...fields, reason: lostReason(signal!.reason) });
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      await sleep(WORK_MS[job], undefined, { signal });
      this.journal.write({ type: 'end', ...fields, outcome: 'completed' });
    } catch (error) {
      if (!signal?.aborted) {
        this.journal.write({ type: 'end', ...fields, outcome: 'failed', error: describe(error) });
        throw error;
      }
      this.journal.write({ type: 'end', ...fields, outcome: 'aborted' }); // the lock is lost: stop here
    } finally {
      signal?.removeEventListener('abort', onAbort);
    }
  }

  private journalLockEvent(event: LockEvent): void {
    if (
      event.type !== 'skipped' &&
      event.type !== 'lost' &&
      event.type !== 'release-failed' &&
      event.type !== 'released'
    )
      return;
    const reason = 'reason' in event ? event.reason : undefined;
    const error = 'error' in event && event.error !== null ? describe(event.error) : undefined;
    this.journal.write({
      type: 'lock-event',
      event: event.type,
      lock: event.lockName,
      fencingToken: event.fencingToken ?? undefined,
      ...(reason === undefined ? {} : { reason }),
      ...(error === undefined ? {} : { error }),
    });
  }
}

function lostReason(reason: unknown): string {
  return reason instanceof LockLostError ? reason.reason : describe(reason);
}
