import { FaultProxy } from '../chaos/fault-proxy.js';
import { SHARED_POSTGRES } from '../support/shared-postgres.js';
import type { StartMessage, WorkerJobSpec } from './fixtures/worker-protocol.js';
import { overlappingPairs, runsBySecond, runSpans } from './run-analysis.js';
import { useWorkerCluster } from './use-worker-cluster.js';

const INSTANCES = ['A', 'B', 'C'];
/** How long every app's connections to PostgreSQL are reset, new ones included. */
const RESET_MS = 3_000;

/**
 * Three worker processes on the shared PostgreSQL, each through a fault proxy of its own: every connection
 * of every app reset (RST), and new ones refused, for 3 s while jobs run, then forwarded again.
 */
describe('three worker processes on PostgreSQL whose connections are reset', () => {
  const proxies: FaultProxy[] = [];
  const cluster = useWorkerCluster('pg-reset', INSTANCES, 'PostgreSQL', (instance) => ({
    PGPORT: String(proxies[INSTANCES.indexOf(instance)].port),
  }));

  beforeEach(async () => {
    for (let i = 0; i < INSTANCES.length; i += 1) proxies.push(await FaultProxy.start(SHARED_POSTGRES.port));
  });
  afterEach(async () => {
    await Promise.all(proxies.splice(0).map((proxy) => proxy.close()));
  });

  it('runs no occurrence twice, no run without its lock, no overlap, and logs the outage once per app', async () => {
    const everySecond: WorkerJobSpec = {
      name: 'every-second',
      schedule: { cron: '* * * * * *' },
      lockAtLeastFor: '500ms',
    };
    // Longer than its interval: a run is in flight when the connections are reset, and its release fails.
    const slow: WorkerJobSpec = { name: 'slow', schedule: { intervalMs: 300 }, lockAtMostFor: '4s', runForMs: 1_200 };
    const workers = await cluster.start(everySecond, slow);
    const startsSince = (at: number) => workers.starts(everySecond.name).filter((start) => start.startedAt >= at);

    await workers.waitUntil(() => startsSince(0).length >= 3 || undefined, 15_000, '3 runs before the reset');
    const resetAt = Date.now();
    for (const proxy of proxies) proxy.setMode('reset');
    await new Promise((resolve) => setTimeout(resolve, RESET_MS));
    const forwardAt = Date.now();
    for (const proxy of proxies) proxy.setMode('forward');
    await workers.waitUntil(() => startsSince(forwardAt).length >= 3 || undefined, 20_000, '3 runs after the reset');
    await workers.waitUntil(
      () => workers.runs(slow.name).filter((run) => run.endedAt >= forwardAt).length >= 2 || undefined,
      20_000,
      '2 slow runs after the reset',
    );

    // No second ran twice; no slow run overlapped another, also the one whose release failed.
    expect([...runsBySecond(workers.starts(everySecond.name))].filter(([, runs]) => runs.length > 1)).toEqual([]);
    expect(overlappingPairs(runSpans(workers.starts(slow.name), workers.runs(slow.name)))).toEqual([]);
    // Every run held its lock: each has a fencing token of its own, growing in start order.
    for (const job of [everySecond, slow]) {
      const starts = workers.starts(job.name);
      const tokens = starts.map((start: StartMessage) => start.fencingToken);
      expect(tokens.every((token) => typeof token === 'number')).toBe(true);
      expect(tokens).toEqual([...tokens].sort((a, b) => a! - b!));
      expect(new Set(tokens).size).toBe(tokens.length);
      // A run starts only once its lock is taken: none while every connection was being reset (a run whose lock
      // came just before the reset starts within the first half second).
      const startedDuringReset = starts.filter(
        (start) => start.startedAt > resetAt + 500 && start.startedAt < forwardAt,
      );
      expect({ resetAt, forwardAt, startedDuringReset }).toEqual({ resetAt, forwardAt, startedDuringReset: [] });
    }
    // The ticks in between were skipped as store errors, on every app.
    const storeErrors = workers.messages.filter(
      (m) => m.kind === 'lock-event' && m.event.type === 'skipped' && m.event.reason === 'provider-error',
    );
    expect(new Set(storeErrors.map((m) => m.instance))).toEqual(new Set(INSTANCES));

    // One line when the outage began and one when it ended, per app: not one per failed statement. Beside them,
    // only a run that straddled the reset says that its lock could not be released (it expires on its own), or
    // that its outcome is recorded once the store answers, and then that it was.
    const straddled = /\[SchedulerLock\] (Could not release lock|Could not record how the run|Recorded how the run)/;
    for (const instance of INSTANCES) {
      const lines = workers.logLines
        .filter((entry) => entry.instance === instance && entry.at >= resetAt)
        .map((entry) => entry.line);
      expect(lines.filter((line) => !straddled.test(line))).toEqual([
        expect.stringMatching(/ERROR \[SchedulerLock\] PostgreSQL 127\.0\.0\.1:\d+\/test is unreachable \(connection/),
        expect.stringMatching(/LOG \[SchedulerLock\] PostgreSQL 127\.0\.0\.1:\d+\/test is reachable again after/),
      ]);
      // At most a run of each job straddled the reset on one app, with two lines for a recorded outcome.
      expect(lines.filter((line) => straddled.test(line)).length).toBeLessThanOrEqual(3);
    }
  }, 90_000);
});
