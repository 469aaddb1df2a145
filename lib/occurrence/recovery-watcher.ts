import { Injectable, type OnModuleDestroy } from '@nestjs/common';
import type { RunClaim } from '../core/active-lock.js';
import type { LockedJob } from '../locked-job.registry.js';
import { LockedJobRunner } from '../locked-job.runner.js';

interface Watch {
  readonly job: LockedJob;
  readonly handler: () => unknown;
  /** The occurrence, with how many runs of it at most and the grace before a re-run. */
  readonly claim: RunClaim;
  /** Wall-clock ms after which the occurrence is left alone: the next one is due. */
  readonly deadline: number;
  pollAt: number;
  polling: boolean;
}

/** How often a watched occurrence is checked without a lease to go by. */
const DEFAULT_POLL_MS = 1_000;
const MIN_POLL_MS = 50;

/**
 * Watches occurrences another node is running, for jobs with `onCrash: 'rerun'`: once the run's lock is
 * gone while its record still says running (its node died), one watcher takes the occurrence over and
 * runs it again. One timer for every watch of the node; a watch ends when the occurrence settles, is
 * re-run, or its deadline passes.
 */
@Injectable()
export class RecoveryWatcher implements OnModuleDestroy {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  constructor(private readonly runner: LockedJobRunner) {}

  watch(job: LockedJob, handler: () => unknown, claim: RunClaim, deadline: number): void {
    if (this.watches.get(job.jobName)?.claim.occurrence === claim.occurrence) return;
    this.watches.set(job.jobName, { job, handler, claim, deadline, pollAt: Date.now() + pollInterval(job), polling: false });
    this.arm();
  }

  onModuleDestroy(): void {
    clearTimeout(this.timer);
    this.watches.clear();
  }

  private arm(): void {
    let next = Infinity;
    for (const watch of this.watches.values()) if (!watch.polling) next = Math.min(next, watch.pollAt);
    if (next >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    if (next === Infinity) return;
    this.timer = setTimeout(() => this.poll(), Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  private poll(): void {
    this.timerAt = Infinity;
    const now = Date.now();
    for (const [jobName, watch] of this.watches) {
      if (watch.polling || watch.pollAt > now) continue;
      if (now >= watch.deadline) {
        this.watches.delete(jobName);
        continue;
      }
      watch.polling = true;
      void this.runner
        .run(watch.job, watch.handler, watch.claim)
        .then((result) => {
          watch.polling = false;
          // Still held by the original run, within the grace, or Redis is unreachable: look again later.
          const lookAgain = result?.executed === false && (result.reason === 'locked' || result.reason === 'store-error');
          if (lookAgain) watch.pollAt = Date.now() + pollInterval(watch.job);
          else if (this.watches.get(jobName) === watch) this.watches.delete(jobName);
          this.arm();
        });
    }
    this.arm();
  }
}

/** A third of the job's lease, so a dead node's occurrence is picked up soon after its lease runs out. */
function pollInterval(job: LockedJob): number {
  const { lease } = job.configuration;
  return lease === undefined ? DEFAULT_POLL_MS : Math.max(MIN_POLL_MS, lease / 3);
}
