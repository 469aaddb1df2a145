import type { Attributes, Meter } from '@opentelemetry/api';
import type { LockEvent, LockEvents } from '../core/task/lock-events.js';

/**
 * The lock metrics of one node, from its lock events: runs by outcome, skips by reason, locks lost, missed
 * occurrences, run duration, lock wait (attempt to acquired or skipped), and lease renewal round trips; from its
 * health checks, the time since each job's last success. Attribute
 * `scheduler_lock.job` is the job's name, or the lock's name for an `executeWithLock` task (so give those
 * tasks few distinct names, or metrics get one series per name).
 */
export class LockMetrics {
  private readonly runs;
  private readonly skips;
  private readonly lost;
  private readonly runDuration;
  private readonly lockWait;
  private readonly renewals;
  private readonly renewalDuration;
  private readonly missed;
  /** When each lock's pending attempts started (`performance.now()`), oldest first. */
  private readonly attempts = new Map<string, number[]>();
  /** Each job's last success cluster-wide (epoch ms), as the node's last health check read it. */
  private lastSuccesses = new Map<string, number>();

  constructor(meter: Meter) {
    this.runs = meter.createCounter('scheduler_lock.runs', { description: 'Locked runs that ended, by outcome' });
    this.skips = meter.createCounter('scheduler_lock.skips', { description: 'Lock attempts skipped, by reason' });
    this.lost = meter.createCounter('scheduler_lock.locks_lost', {
      description: 'Locks lost while their run went on, by reason',
    });
    this.runDuration = meter.createHistogram('scheduler_lock.run.duration', {
      description: 'How long locked runs took',
      unit: 's',
    });
    this.lockWait = meter.createHistogram('scheduler_lock.lock.wait', {
      description: 'How long a lock attempt waited for the store, until the lock was taken or skipped',
      unit: 's',
    });
    this.renewals = meter.createCounter('scheduler_lock.renewal.round_trips', {
      description: 'Lease renewal round trips to the store (each renews every due lease of the node)',
    });
    this.missed = meter.createCounter('scheduler_lock.missed', {
      description: 'Occurrences no node ran, counted once for the cluster on the node that reported them',
    });
    this.renewalDuration = meter.createHistogram('scheduler_lock.renewal.duration', {
      description: 'How long a lease renewal round trip took',
      unit: 's',
    });
    const sinceSuccess = meter.createObservableGauge('scheduler_lock.since_last_success', {
      description: "Time since the start of the job's last successful run on any node (none for a job without one)",
      unit: 's',
    });
    sinceSuccess.addCallback((gauge) => {
      const now = Date.now();
      for (const [job, at] of this.lastSuccesses) gauge.observe((now - at) / 1000, { 'scheduler_lock.job': job });
    });
  }

  /** Keeps each job's last success from a health check, for the gauge: the jobs it does not list are gone. */
  healthChecked(jobs: readonly { readonly jobName: string; readonly lastSuccess: Date | null }[]): void {
    this.lastSuccesses = new Map(jobs.flatMap((job) => (job.lastSuccess ? [[job.jobName, +job.lastSuccess]] : [])));
  }

  /** Counts `events` from now on. */
  observe(events: LockEvents): void {
    events.events$.subscribe((event) => this.record(event));
  }

  renewalRoundTrip(leases: number, durationMs: number, failed: boolean): void {
    const attributes = { 'scheduler_lock.outcome': failed ? 'failed' : 'succeeded' };
    this.renewals.add(1, attributes);
    this.renewalDuration.record(durationMs / 1000, { ...attributes, 'scheduler_lock.leases': leases });
  }

  private record(event: LockEvent): void {
    const job: Attributes = { 'scheduler_lock.job': event.jobName ?? event.lockName };
    switch (event.type) {
      case 'attempt':
        this.attemptStarted(event.lockName);
        break;
      case 'acquired':
        this.attemptEnded(event.lockName, { ...job, 'scheduler_lock.result': 'acquired' });
        break;
      case 'skipped':
        this.attemptEnded(event.lockName, { ...job, 'scheduler_lock.result': 'skipped' });
        this.skips.add(1, { ...job, 'scheduler_lock.reason': event.reason });
        break;
      case 'finished': {
        const attributes = { ...job, 'scheduler_lock.outcome': event.outcome };
        this.runs.add(1, attributes);
        this.runDuration.record(event.durationMs / 1000, attributes);
        break;
      }
      case 'lost':
        this.lost.add(1, { ...job, 'scheduler_lock.reason': event.reason });
        break;
      case 'missed':
        this.missed.add(event.occurrences.length, job);
        break;
      // No metric of their own: a run is counted when it finishes, a renewal by renewalRoundTrip(); failing and
      // healthy are a job's state, which since_last_success and the failed runs show.
      case 'started':
      case 'released':
      case 'extended':
      case 'release-failed':
      case 'operator':
      case 'failing':
      case 'healthy':
        break;
    }
  }

  private attemptStarted(lockName: string): void {
    const pending = this.attempts.get(lockName);
    if (pending) pending.push(performance.now());
    else this.attempts.set(lockName, [performance.now()]);
  }

  /** Subscribers run when the event happens, so now is when the attempt ended. */
  private attemptEnded(lockName: string, attributes: Attributes): void {
    const pending = this.attempts.get(lockName);
    const startedAt = pending?.shift();
    if (pending?.length === 0) this.attempts.delete(lockName);
    if (startedAt !== undefined) this.lockWait.record((performance.now() - startedAt) / 1000, attributes);
  }
}
