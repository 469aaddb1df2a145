import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import {
  fireTimes,
  forEachOccurrence,
  iso,
  nearestFireTime,
  nextFireTime,
  outcomesByOccurrence,
  runsPerOccurrence,
  tickOutcomes,
} from './occurrence-analysis.js';
import { everyTickOf, TWO_TRIOS_READY_MS, useOccurrenceClusters } from './occurrence-clusters.js';
import { withShiftedClock } from './worker-launches.js';

/**
 * Once-per-occurrence cron jobs on separate OS processes (each its own Nest app and clock reading) on the shared
 * Redis: every nominal fire time runs once cluster-wide, whatever the nodes' clock skew. The longest case of
 * occurrence.spec.ts, in a file of its own so that the two can run at once.
 */
describe('once-per-occurrence cron jobs across worker processes', () => {
  const { startCluster } = useOccurrenceClusters();

  it('runs each occurrence once on nodes whose clocks are 4 s apart, where the same nodes without occurrences run some twice', async () => {
    const gapMs = 10_000;
    const shifts = { behind: -4_000, exact: 0, ahead: 4_000 };
    const workers = Object.entries(shifts).map(([instance, shiftMs]) => withShiftedClock(instance, shiftMs));
    const schedule = { cron: '*/10 * * * * *' };
    const onceJob: WorkerJobSpec = { name: 'skewed-once', schedule, maxClockSkew: '4s', runForMs: 100 };
    const plainJob: WorkerJobSpec = {
      name: 'skewed-plain',
      schedule,
      occurrence: false,
      lockAtLeastFor: 0,
      runForMs: 100,
    };
    // Both trios in the same minute, each on its own key prefix: the claim, and proof that the test can fail.
    const [once, plain] = await Promise.all([
      startCluster(workers, onceJob, TWO_TRIOS_READY_MS),
      startCluster(workers, plainJob, TWO_TRIOS_READY_MS),
    ]);

    // From the first fire time that even the node furthest ahead reaches after all nodes are up: three occurrences,
    // as on PostgreSQL (postgres-skew.spec.ts); all three nodes tick each one, within 8 s.
    const window = fireTimes(nextFireTime(Date.now() + shifts.ahead, gapMs), 3, gapMs);
    const last = window.at(-1)!;
    const untilBehindTicksLast = last - shifts.behind - Date.now() + 5_000;
    await Promise.all(
      [
        { cluster: once, job: onceJob },
        { cluster: plain, job: plainJob },
      ].map(({ cluster, job }) =>
        cluster.waitUntil(
          everyTickOf(cluster, job, last, gapMs, workers.length),
          untilBehindTicksLast,
          `every tick of ${iso(last)} (${job.name})`,
        ),
      ),
    );

    expect(runsPerOccurrence(once.starts(onceJob.name), window)).toEqual(forEachOccurrence(window, 1));
    // Every node ticked every occurrence (each on its own clock); the two that did not run it learnt it had run.
    expect(outcomesByOccurrence(tickOutcomes(once, onceJob.name, gapMs), window)).toEqual(
      forEachOccurrence(window, ['already-ran', 'already-ran', 'ran']),
    );
    const plainRuns = runsPerOccurrence(plain.starts(plainJob.name), window, (start) =>
      nearestFireTime(start.startedAt, gapMs),
    );
    expect(Object.values(plainRuns).filter((runs) => runs > 1).length).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
