import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
} from '@opentelemetry/sdk-metrics';
import { LockEvents } from '../../lib/core/task/lock-events.js';
import { LockMetrics } from '../../lib/opentelemetry/lock-metrics.js';

describe('the missed occurrences metric', () => {
  it('counts each occurrence of a missed event, by job', async () => {
    const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
    const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
    const events = new LockEvents();
    new LockMetrics(new MeterProvider({ readers: [reader] }).getMeter('test')).observe(events);
    const base = { lockName: 'report', jobName: 'report', node: 'node-1', at: new Date(), fencingToken: null };
    events.emit({ ...base, type: 'missed', occurrences: [new Date(0), new Date(2_000)] });
    events.emit({ ...base, type: 'failing', failuresInARow: 3 });
    events.emit({ ...base, type: 'missed', occurrences: [new Date(4_000)] });
    await reader.forceFlush();
    const metrics = exporter
      .getMetrics()
      .flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
    const missed = metrics.filter((metric) => metric.descriptor.name === 'scheduler_lock.missed').at(-1);
    expect(missed?.dataPoints.map((point) => [point.attributes, point.value])).toEqual([
      [{ 'scheduler_lock.job': 'report' }, 3],
    ]);
  });
});
