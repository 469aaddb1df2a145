import type { StartMessage, WorkerJobSpec } from './fixtures/worker-protocol.js';
import { isBlocked, isStartOf } from './message-matchers.js';
import { forEachOccurrence, iso, outcomesByOccurrence, tickOutcomes, type TickOutcome } from './occurrence-analysis.js';
import { everyTickOf, TWO_TRIOS_READY_MS, useOccurrenceClusters } from './occurrence-clusters.js';
import type { WorkerCluster } from './worker-cluster.js';
import { withBlockedEventLoop } from './worker-launches.js';

/**
 * Once-per-occurrence cron jobs, shown with separate OS processes (each its own Nest app, clock
 * reading and timers) on the shared Redis: every nominal fire time runs once cluster-wide, despite a late
 * timer or a node dying mid-run (clock skew: occurrence-clock-skew.spec.ts). A catch-up is a kit check.
 */
describe('once-per-occurrence cron jobs across worker processes', () => {
  const INSTANCES = ['A', 'B', 'C'];
  const { startCluster } = useOccurrenceClusters();

  it('skips, as already run, the tick of a node whose event loop stalled past the fire time', async () => {
    const gapMs = 5_000;
    const marginMs = 1_000;
    const job: WorkerJobSpec = { name: 'late-tick', schedule: { cron: '*/5 * * * * *' }, runForMs: 100 };
    const cluster = await startCluster(['A', 'B', withBlockedEventLoop('late', { everyMs: gapMs, marginMs })], job);

    const { around } = await cluster.waitFor(
      isBlocked,
      gapMs + 2 * marginMs + 5_000,
      'the late worker to stall around a fire time',
    );
    const lateTick = await cluster.waitUntil(
      () => tickOutcomes(cluster, job.name, gapMs).find((tick) => tick.instance === 'late' && tick.at >= around),
      5_000,
      "the late worker's first tick after the stall",
    );
    const ticks = await cluster.waitUntil(
      everyTickOf(cluster, job, around, gapMs, 3),
      5_000,
      `every tick of ${iso(around)}`,
    );

    expect(lateTick.at).toBeGreaterThanOrEqual(around + marginMs); // its timer really fired late
    expect(lateTick).toMatchObject<Partial<TickOutcome>>({ occurrence: around, outcome: 'already-ran' });
    expect(ticks.map((tick) => tick.outcome).sort()).toEqual(['already-ran', 'already-ran', 'ran']);
  }, 45_000);

  it("re-runs the occurrence of a node killed -9 mid-run once, after a lease and the grace, with onCrash 'rerun'; not with 'skip'", async () => {
    const gapMs = 10_000;
    const leaseMs = 1_000;
    /** How long the dead node's lock must have been gone before a re-run (the dead node cannot come back). */
    const graceMs = 1_000;
    /** A watcher looks at the dead node's occurrence at least this often (RecoveryWatcher's slowest poll). */
    const pollMs = 1_000;
    const crashingJob = (name: string, onCrash: 'rerun' | 'skip'): WorkerJobSpec => ({
      name,
      schedule: { cron: '*/10 * * * * *' },
      keepAlive: { lease: leaseMs },
      onCrash,
      recoveryGrace: graceMs,
      runForMs: 3_000,
    });
    const rerunJob = crashingJob('crash-rerun', 'rerun');
    const skipJob = crashingJob('crash-skip', 'skip');
    const [rerun, skip] = await Promise.all([
      startCluster(INSTANCES, rerunJob, TWO_TRIOS_READY_MS),
      startCluster(INSTANCES, skipJob, TWO_TRIOS_READY_MS),
    ]);
    // Every worker's timer is set by now, so the next occurrence is ticked by all three.
    const readyAt = Date.now();
    const killFirstRunner = async (cluster: WorkerCluster, job: WorkerJobSpec) => {
      const start = await cluster.waitFor(
        isStartOf(job.name, (s) => s.occurrence! >= readyAt),
        gapMs + 5_000,
        `a run of ${job.name}`,
      );
      const killedAt = Date.now();
      await cluster.kill(start.instance);
      return { ...start, occurrence: start.occurrence!, killedAt };
    };
    const [rerunCrash, skipCrash] = await Promise.all([
      killFirstRunner(rerun, rerunJob),
      killFirstRunner(skip, skipJob),
    ]);

    const reRun = await rerun.waitFor(
      isStartOf(rerunJob.name, (s) => s.occurrence === rerunCrash.occurrence && s.runId !== rerunCrash.runId),
      leaseMs + graceMs + pollMs + 5_000,
      `a re-run of ${iso(rerunCrash.occurrence)}`,
    );
    expect(reRun.instance).not.toBe(rerunCrash.instance);
    expect(reRun).toMatchObject<Partial<StartMessage>>({
      catchUp: false,
      recovery: { attempt: 2, previousNode: rerunCrash.instance },
    });
    expect(reRun.startedAt - rerunCrash.killedAt).toBeGreaterThanOrEqual(graceMs);
    expect(reRun.startedAt - rerunCrash.killedAt).toBeLessThanOrEqual(leaseMs + graceMs + pollMs);
    expect(reRun.startedAt).toBeLessThan(rerunCrash.occurrence + gapMs);

    // Once the next occurrence runs, no re-run of the crashed one can come any more (its deadline is past).
    await Promise.all(
      [
        { cluster: rerun, job: rerunJob, crash: rerunCrash },
        { cluster: skip, job: skipJob, crash: skipCrash },
      ].map(({ cluster, job, crash }) =>
        cluster.waitFor(
          isStartOf(job.name, (s) => s.occurrence === crash.occurrence + gapMs),
          gapMs + 5_000,
          `the occurrence after ${job.name}'s crash`,
        ),
      ),
    );
    const attemptsOf = (cluster: WorkerCluster, job: WorkerJobSpec, occurrence: number) =>
      cluster
        .starts(job.name)
        .filter((start) => start.occurrence === occurrence)
        .map((start) => start.recovery?.attempt ?? 1);
    expect(attemptsOf(rerun, rerunJob, rerunCrash.occurrence)).toEqual([1, 2]);
    expect(attemptsOf(skip, skipJob, skipCrash.occurrence)).toEqual([1]);
    // With 'skip' the two survivors were up and ticked the crashed occurrence: they left it alone.
    expect(outcomesByOccurrence(tickOutcomes(skip, skipJob.name, gapMs), [skipCrash.occurrence])).toEqual(
      forEachOccurrence([skipCrash.occurrence], ['already-ran', 'already-ran', 'ran']),
    );
  }, 90_000);
});
