import {
  metrics,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type MeterProvider,
  type Span,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { LockEvents } from '../core/task/lock-events.js';
import type { InstrumentedRun, RunInstrumentation } from '../core/executor/run-instrumentation.js';
import { LockMetrics } from './lock-metrics.js';

/** Options of {@link SchedulerLockTelemetry}. */
export interface SchedulerLockTelemetryOptions {
  /** Where spans go. Default: the global one (`trace.getTracerProvider()`), a no-op until an SDK registers one. */
  tracerProvider?: TracerProvider;
  /** Where metrics go. Default: the global one (`metrics.getMeterProvider()`), a no-op until an SDK sets one. */
  meterProvider?: MeterProvider;
}

/** The instrumentation scope of the spans and metrics. */
const SCOPE = 'nest-scheduler-lock';

/**
 * OpenTelemetry for locked runs: one span per run (`scheduler_lock.run <job>`), current while the handler
 * runs so that its own spans nest under it, with the job, lock, occurrence, fencing token, attempt and outcome
 * as attributes, and a `scheduler_lock.lost` event when the lock is lost mid-run. A skipped attempt is no
 * span: it is counted (`scheduler_lock.skips`), and is an event on the caller's span when it has one (an
 * `executeWithLock` inside a traced request). Metrics: see {@link LockMetrics}.
 *
 * `SchedulerLockModule.forRoot({ …, instrumentation: new SchedulerLockTelemetry() })`, or the executor's
 * `instrumentation` setting.
 */
export class SchedulerLockTelemetry implements RunInstrumentation {
  private readonly tracer: Tracer;
  private readonly metrics: LockMetrics;

  constructor(options: SchedulerLockTelemetryOptions = {}) {
    this.tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(SCOPE);
    this.metrics = new LockMetrics((options.meterProvider ?? metrics.getMeterProvider()).getMeter(SCOPE));
  }

  attach(events: LockEvents): void {
    this.metrics.observe(events);
    events.events$.subscribe((event) => {
      if (event.type !== 'skipped') return;
      trace.getActiveSpan()?.addEvent('scheduler_lock.skipped', {
        'scheduler_lock.lock': event.lockName,
        'scheduler_lock.reason': event.reason,
      });
    });
  }

  around<T>(run: InstrumentedRun, task: () => T | Promise<T>): Promise<T> {
    const name = `scheduler_lock.run ${run.jobName ?? run.name}`;
    return this.tracer.startActiveSpan(name, { kind: SpanKind.INTERNAL, attributes: runAttributes(run) }, (span) => {
      const onLost = () => span.addEvent('scheduler_lock.lost', { 'scheduler_lock.reason': lostReason(run) });
      run.signal.addEventListener('abort', onLost, { once: true });
      const ended = (outcome: 'succeeded' | 'failed') => {
        run.signal.removeEventListener('abort', onLost);
        span.setAttribute('scheduler_lock.outcome', outcome);
        span.end();
      };
      // Called inside startActiveSpan: the span is current for the task and everything it awaits.
      let settled: Promise<T>;
      try {
        settled = Promise.resolve(task());
      } catch (error) {
        settled = Promise.reject(error);
      }
      return settled.then(
        (result) => {
          ended('succeeded');
          return result;
        },
        (error: unknown) => {
          recordFailure(span, error);
          ended('failed');
          throw error;
        },
      );
    });
  }

  renewalRoundTrip(leases: number, durationMs: number, failed: boolean): void {
    this.metrics.renewalRoundTrip(leases, durationMs, failed);
  }

  healthChecked(jobs: readonly { readonly jobName: string; readonly lastSuccess: Date | null }[]): void {
    this.metrics.healthChecked(jobs);
  }
}

function runAttributes(run: InstrumentedRun): Attributes {
  return {
    'scheduler_lock.job': run.jobName ?? undefined,
    'scheduler_lock.lock': run.name,
    'scheduler_lock.locked_by': run.node,
    'scheduler_lock.fencing_token': run.fencingToken ?? undefined,
    'scheduler_lock.occurrence': run.occurrence?.toISOString(),
    'scheduler_lock.attempt': run.recovery?.attempt ?? 1,
    'scheduler_lock.catch_up': run.catchUp,
  };
}

function lostReason(run: InstrumentedRun): string {
  const reason = (run.signal.reason as { reason?: unknown } | undefined)?.reason;
  return typeof reason === 'string' ? reason : 'unknown';
}

function recordFailure(span: Span, error: unknown): void {
  if (error instanceof Error) span.recordException(error);
  span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.name : 'failed' });
}
