import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { context, type Attributes, type Tracer } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  AggregationTemporality,
  DataPointType,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { currentLock, LockingTaskExecutor, SchedulerLock, type LockContext } from '../../lib/index.js';
import { SchedulerLockTelemetry } from '../../lib/opentelemetry/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { aborted } from '../support/memory-executor.js';
import { nextEvent } from '../support/lock-events.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { runClockUntil } from '../support/fake-clock.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

/** The in-memory exporters of one test, and the instrumentation that writes to them. */
interface Telemetry {
  readonly spans: InMemorySpanExporter;
  readonly instrumentation: SchedulerLockTelemetry;
  /** The tracer a handler uses for spans of its own. */
  readonly appTracer: Tracer;
  /** Every metric recorded so far, by name. */
  metric(name: string): Promise<MetricData | undefined>;
}

let telemetry: Telemetry;
const contextManager = new AsyncLocalStorageContextManager();
const store = new TestLockProvider();

beforeAll(() => context.setGlobalContextManager(contextManager.enable()));
// On fake time, the jobs' timers and the lease keeper's too: the instrumentation is the subject, not a store.
beforeEach(() => {
  jest.useFakeTimers();
  const spans = new InMemorySpanExporter();
  const tracerProvider = new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(spans)] });
  const metrics = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter: metrics, exportIntervalMillis: 3_600_000 });
  const meterProvider = new MeterProvider({ readers: [reader] });
  telemetry = {
    spans,
    instrumentation: new SchedulerLockTelemetry({ tracerProvider, meterProvider }),
    appTracer: tracerProvider.getTracer('app'),
    async metric(name) {
      await runClockUntil(reader.forceFlush());
      const all = metrics.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
      return all.filter((metric) => metric.descriptor.name === name).at(-1);
    },
  };
});
afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
  store.reset();
});
afterAll(() => context.disable());

function startTracedApp(providers: Parameters<typeof startSchedulerApp>[0]['providers']) {
  return startSchedulerApp({
    lock: {
      provider: store.provider('node-a'),
      defaultLockAtMostFor: '10s',
      instrumentation: telemetry.instrumentation,
    },
    providers,
  });
}

/** The value of a counter's data point whose attributes include `attributes`; 0 without one. */
async function counted(name: string, attributes: Attributes): Promise<number> {
  const metric = await telemetry.metric(name);
  const point = metric?.dataPoints.find((p) => Object.entries(attributes).every(([k, v]) => p.attributes[k] === v));
  if (!point) return 0;
  return metric!.dataPointType === DataPointType.HISTOGRAM
    ? (point.value as { count: number }).count
    : (point.value as number);
}

/** What the traced handler saw of its lock and its own span. */
let seen: { lock: LockContext; spanId: string } | undefined;

@Injectable()
class TracedJobs {
  @Cron('* * * * * *', { name: 'traced' })
  @SchedulerLock()
  async report() {
    await telemetry.appTracer.startActiveSpan('render report', async (span) => {
      await new Promise(setImmediate); // an await between: the run's span must still be the parent after it
      seen = { lock: currentLock()!, spanId: span.spanContext().spanId };
      span.end();
    });
  }
}

@Injectable()
class FailingJob {
  @Interval('failing', 100)
  @SchedulerLock()
  fail() {
    throw new TypeError('cannot render');
  }
}

@Injectable()
class OverrunJob {
  @Timeout('overrun', 10)
  @SchedulerLock({ lockAtMostFor: '2s', keepAlive: { lease: '1s' } })
  async overrun() {
    // Runs until its signal aborts: the lock, renewed until lockAtMostFor, is lost mid-run.
    await aborted(currentLock()!.signal);
  }
}

describe('SchedulerLockTelemetry (OpenTelemetry SDK, in-memory exporters)', () => {
  it('makes a span per run, current in the handler: its own spans nest under it, with the run as attributes', async () => {
    seen = undefined;
    const app = await startTracedApp([TracedJobs]);
    await runClockUntil(nextEvent(app.history$, jobEvent('released', 'traced'), 5_000));

    const spans = telemetry.spans.getFinishedSpans();
    const run = spans.find((span) => span.name === 'scheduler_lock.run traced')!;
    const handler = spans.find((span) => span.spanContext().spanId === seen!.spanId)!;
    expect(handler.name).toBe('render report');
    expect(handler.parentSpanContext?.spanId).toBe(run.spanContext().spanId);
    expect(handler.spanContext().traceId).toBe(run.spanContext().traceId);
    expect(run.attributes).toEqual({
      'scheduler_lock.job': 'traced',
      'scheduler_lock.lock': 'traced',
      'scheduler_lock.locked_by': seen!.lock.node,
      'scheduler_lock.fencing_token': seen!.lock.fencingToken,
      'scheduler_lock.occurrence': seen!.lock.occurrence!.toISOString(),
      'scheduler_lock.attempt': 1,
      'scheduler_lock.catch_up': false,
      'scheduler_lock.outcome': 'succeeded',
    });
    expect(
      await counted('scheduler_lock.runs', { 'scheduler_lock.job': 'traced', 'scheduler_lock.outcome': 'succeeded' }),
    ).toBe(1);
    expect(await counted('scheduler_lock.run.duration', { 'scheduler_lock.job': 'traced' })).toBe(1);
    expect(await counted('scheduler_lock.lock.wait', { 'scheduler_lock.result': 'acquired' })).toBeGreaterThanOrEqual(
      1,
    );
  });

  it('marks a failed run: error status, the exception, outcome failed, counted by outcome', async () => {
    const app = await startTracedApp([FailingJob]);
    await runClockUntil(
      nextEvent(app.history$, (event) => jobEvent('finished', 'failing')(event) && event.outcome === 'failed'),
    );

    const run = telemetry.spans.getFinishedSpans().find((span) => span.name === 'scheduler_lock.run failing')!;
    expect(run.status).toEqual({ code: 2, message: 'TypeError' }); // SpanStatusCode.ERROR
    expect(run.attributes['scheduler_lock.outcome']).toBe('failed');
    expect(run.events.map((event) => [event.name, event.attributes?.['exception.message']])).toEqual([
      ['exception', 'cannot render'],
    ]);
    expect(
      await counted('scheduler_lock.runs', { 'scheduler_lock.job': 'failing', 'scheduler_lock.outcome': 'failed' }),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts a skipped attempt instead of a span, and marks it on the span of a traced caller', async () => {
    const app = await startTracedApp([]);
    const elsewhere = await store.hold('billing', { as: 'elsewhere', for: 10_000 });
    const executor = app.get(LockingTaskExecutor);

    const result = await telemetry.appTracer.startActiveSpan('POST /billing', async (request) => {
      const skipped = await executor.executeWithLock(() => 'billed', { name: 'billing' });
      request.end();
      return skipped;
    });
    await elsewhere.release();

    expect(result).toEqual({ executed: false, reason: 'locked' });
    const spans = telemetry.spans.getFinishedSpans();
    expect(spans.map((span) => span.name)).toEqual(['POST /billing']);
    expect(spans[0].events.map((event) => [event.name, event.attributes])).toEqual([
      ['scheduler_lock.skipped', { 'scheduler_lock.lock': 'billing', 'scheduler_lock.reason': 'locked' }],
    ]);
    expect(
      await counted('scheduler_lock.skips', { 'scheduler_lock.job': 'billing', 'scheduler_lock.reason': 'locked' }),
    ).toBe(1);
    expect(
      await counted('scheduler_lock.lock.wait', {
        'scheduler_lock.job': 'billing',
        'scheduler_lock.result': 'skipped',
      }),
    ).toBe(1);
  });

  it('counts renewal round trips and a lock lost mid-run, an event on the run span', async () => {
    const app = await startTracedApp([OverrunJob]);
    await runClockUntil(nextEvent(app.history$, jobEvent('finished', 'overrun'), 10_000));

    const run = telemetry.spans.getFinishedSpans().find((span) => span.name === 'scheduler_lock.run overrun')!;
    expect(run.events.map((event) => [event.name, event.attributes])).toEqual([
      ['scheduler_lock.lost', { 'scheduler_lock.reason': 'expired' }],
    ]);
    expect(
      await counted('scheduler_lock.locks_lost', {
        'scheduler_lock.job': 'overrun',
        'scheduler_lock.reason': 'expired',
      }),
    ).toBe(1);
    // A 1 s lease is renewed every 333 ms until the cap, about 5 times in 2 s (a 1 s lease, not shorter: a
    // loaded runner's stalled event loop must not end it on the node's own deadline first). Each lease
    // renewal is one round trip of its own here (one lock held); one more may be under way when the lock is
    // lost at the cap, and renews nothing the run still holds.
    const renewed = app.recorded.filter(jobEvent('extended', 'overrun')).length;
    expect(renewed).toBeGreaterThanOrEqual(2);
    const roundTrips = await counted('scheduler_lock.renewal.round_trips', { 'scheduler_lock.outcome': 'succeeded' });
    expect([renewed, renewed + 1]).toContain(roundTrips);
    expect(await counted('scheduler_lock.renewal.duration', { 'scheduler_lock.leases': 1 })).toBe(roundTrips);
  });
});
