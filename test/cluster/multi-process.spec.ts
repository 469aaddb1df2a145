import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import { endlessJob, runAfterKill } from './kill-handover.js';
import { isStartOf } from './message-matchers.js';
import { overlappingPairs, runsBySecond, runSpans } from './run-analysis.js';
import { useWorkerCluster, type WorkerStore } from './use-worker-cluster.js';

/**
 * The claim of the library, shown with separate OS processes (each its own Nest app, store client
 * and timers) on the shared Redis, and on the shared PostgreSQL: a locked job runs on one node at a time.
 */
describe.each<WorkerStore>(['Redis', 'PostgreSQL'])('three worker processes on one %s', (store) => {
  const INSTANCES = ['A', 'B', 'C'];
  const cluster = useWorkerCluster('cluster', INSTANCES, store);

  it('runs a per-second cron job once per second across the cluster, and in (nearly) every second', async () => {
    const job: WorkerJobSpec = { name: 'every-second', schedule: { cron: '* * * * * *' }, lockAtLeastFor: '500ms' };
    const workers = await cluster.start(job);
    const windowStart = Math.ceil(Date.now() / 1000) * 1000;
    const windowEnd = windowStart + 10_000;

    // A run after the window means every run inside it was reported (each second's run is reported at once).
    await workers.waitFor(
      isStartOf(job.name, (start) => start.startedAt >= windowEnd),
      windowEnd - Date.now() + 3_000,
      'a run after the 10 s window',
    );

    const inWindow = (at: number) => at >= windowStart && at < windowEnd;
    const bySecond = runsBySecond(workers.starts(job.name).filter((start) => inWindow(start.startedAt)));
    const secondsRunMoreThanOnce = [...bySecond].filter(([, runs]) => runs.length > 1);
    expect(secondsRunMoreThanOnce).toEqual([]);
    expect(bySecond.size).toBeGreaterThanOrEqual(8);
    // All three really competed for each occurrence: each one ran the job, or found the occurrence claimed by
    // another node (or its lock held). Which node wins is whose claim reaches Redis first, not a turn: a node
    // on a busy machine may lose ten seconds in a row.
    const lost = (reason: string) => reason === 'already-ran' || reason === 'locked';
    const contenders = workers
      .lockEvents(job.name)
      .filter(
        ({ event }) =>
          inWindow(event.at) && (event.type === 'acquired' || (event.type === 'skipped' && lost(event.reason))),
      )
      .map(({ instance }) => instance);
    expect(new Set(contenders)).toEqual(new Set(INSTANCES));
  }, 25_000);

  it('never overlaps a job that runs longer than its interval, across the cluster', async () => {
    const job: WorkerJobSpec = {
      name: 'slower-than-its-interval',
      schedule: { intervalMs: 200 },
      lockAtMostFor: '5s',
      runForMs: 700,
    };
    const workers = await cluster.start(job);

    await workers.waitUntil(() => workers.runs(job.name).length >= 5 || undefined, 10_000, '5 finished runs');

    const spans = runSpans(workers.starts(job.name), workers.runs(job.name));
    expect(overlappingPairs(spans)).toEqual([]);
    // The claim needs contention: at least two instances tried to run the job while another held its lock.
    const skippedBy = workers
      .lockEvents(job.name)
      .filter(({ event }) => event.type === 'skipped' && event.reason === 'locked')
      .map(({ instance }) => instance);
    expect(new Set(skippedBy).size).toBeGreaterThanOrEqual(2);
  }, 25_000);

  it('lets another process run the job lockAtMostFor after the process running it was killed -9', async () => {
    const lockAtMostForMs = 3_000;
    const tickMs = 200;
    const toleranceMs = 50;
    const job = endlessJob('runs-forever', tickMs, { lockAtMostFor: lockAtMostForMs });
    const workers = await cluster.start(job);

    const first = await workers.waitFor(isStartOf(job.name), 5_000, 'the first run');
    const next = await runAfterKill(workers, first, lockAtMostForMs + 3_000);
    expect(next.instance).not.toBe(first.instance);
    // The lock's TTL starts when the store takes it: after the first worker asked for it, a little before its run started.
    expect(next.startedAt - first.lockedAt!).toBeGreaterThanOrEqual(lockAtMostForMs - toleranceMs);
    expect(next.startedAt - first.startedAt).toBeLessThanOrEqual(lockAtMostForMs + 2 * tickMs + toleranceMs);
  }, 25_000);
});
