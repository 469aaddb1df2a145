import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import {
  AggregationTemporality,
  InMemoryMetricExporter,
  MeterProvider,
  PeriodicExportingMetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { SchedulerLock } from '../../lib/index.js';
import { SchedulerLockTelemetry } from '../../lib/opentelemetry/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { compileKitNode } from '../support/kit-node.js';
import { runClockUntil } from '../support/fake-clock.js';

/** The 10 s occurrences start here; the node starts 100 ms before the first. */
const T0 = Date.parse('2027-01-01T00:00:00Z');
const store = new TestLockProvider();
let failures = 0;
let moduleRef: TestingModule | undefined;

@Injectable()
class Jobs {
  @SchedulerLock({ lockAtMostFor: '1m', retry: { retries: 2, backoff: '1s' } })
  @Cron('*/10 * * * * *', { name: 'ledger' })
  ledger() {
    if (failures-- > 0) throw new Error('boom: the ledger is locked');
  }
}

/** A node whose metrics go to an in-memory exporter; `metric(name)` flushes and finds one. */
async function telemetryNode(): Promise<{ node: TestNode; metric(name: string): Promise<MetricData | undefined> }> {
  const exporter = new InMemoryMetricExporter(AggregationTemporality.CUMULATIVE);
  const reader = new PeriodicExportingMetricReader({ exporter, exportIntervalMillis: 3_600_000 });
  const instrumentation = new SchedulerLockTelemetry({ meterProvider: new MeterProvider({ readers: [reader] }) });
  moduleRef = await compileKitNode(store, 'node-1', [Jobs], { instrumentation });
  return {
    node: await SchedulerLockTest.node(moduleRef),
    async metric(name) {
      exporter.reset();
      await runClockUntil(reader.forceFlush());
      const all = exporter.getMetrics().flatMap((resource) => resource.scopeMetrics.flatMap((scope) => scope.metrics));
      return all.find((metric) => metric.descriptor.name === name);
    },
  };
}

const points = (metric: MetricData | undefined) => metric?.dataPoints.map((point) => [point.attributes, point.value]);

beforeEach(() => {
  jest.useFakeTimers({ now: T0 - 100 });
});
afterEach(async () => {
  await moduleRef?.close();
  jest.useRealTimers();
  store.reset();
  failures = 0;
});

describe('the health metrics of a node', () => {
  it("gauges the time since each job's last success, from the node's health checks", async () => {
    const { node, metric } = await telemetryNode();
    await node.checkHealth();
    expect(points(await metric('scheduler_lock.since_last_success')) ?? []).toEqual([]);
    await jest.advanceTimersByTimeAsync(100 + 30_000); // successes at 0, 10, 20 and 30 s
    failures = Infinity;
    await jest.advanceTimersByTimeAsync(10_000 + 5_000); // 40 s fails, with its two retries
    await node.checkHealth();
    const [[attributes, seconds]] = points(await metric('scheduler_lock.since_last_success'))!;
    expect(attributes).toEqual({ 'scheduler_lock.job': 'ledger' });
    expect(seconds).toBeGreaterThanOrEqual(15);
    expect(seconds).toBeLessThan(16);
  });

  it('counts failed runs, each retry one of them', async () => {
    const { metric } = await telemetryNode();
    failures = 3;
    await jest.advanceTimersByTimeAsync(100 + 10_000 + 10);
    const runs = points(await metric('scheduler_lock.runs'));
    expect(runs).toEqual(
      expect.arrayContaining([
        [{ 'scheduler_lock.job': 'ledger', 'scheduler_lock.outcome': 'failed' }, 3],
        [{ 'scheduler_lock.job': 'ledger', 'scheduler_lock.outcome': 'succeeded' }, 1],
      ]),
    );
  });
});
