import type { CatalogueJob, HistoryEntry, RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { jobHealth, type HealthFacts } from '../../lib/operators/job-health.js';
import { cronFireTimes } from '../../lib/operators/next-fire-time.js';
import type { LockState } from '../../lib/operators/operator-provider.js';

/** A `@Cron('*\/2 * * * * *')` job: due at every even second. */
const CRON: CatalogueJob = {
  jobName: 'report',
  lockName: 'report',
  kind: 'cron',
  schedule: '*/2 * * * * *',
  lockAtMostFor: 60_000,
  lockAtLeastFor: 0,
  occurrence: true,
  timeZone: null,
  lease: null,
};
const INTERVAL: CatalogueJob = { ...CRON, kind: 'interval', schedule: '5000', occurrence: false };
const T0 = Date.parse('2026-01-01T00:00:00.000Z');
const POLICY = { grace: 500, failingAfter: 3, pauseAfter: null };

function run(occurrence: number, outcome: RunHistoryEntry['outcome'] = 'succeeded'): RunHistoryEntry {
  return {
    type: 'run',
    occurrence: new Date(occurrence),
    node: 'node-a',
    startedAt: new Date(occurrence + 3),
    finishedAt: null,
    durationMs: null,
    outcome,
    error: null,
    fencingToken: null,
    attempt: 1,
    manual: null,
  };
}

async function facts(recent: HistoryEntry[], held: Partial<LockState> = {}, job = CRON): Promise<HealthFacts> {
  const fireTimes = job.kind === 'cron' ? await cronFireTimes(job.schedule, job.timeZone) : null;
  const lock = { holder: null, fencingToken: null, paused: null, ...held };
  return { job, lock, recent, fireTimes, watchedSince: new Date(T0) };
}

describe('jobHealth: a job cluster-wide from its schedule and its history', () => {
  it('is never-run before its first occurrence, on time once it ran, late past the grace', async () => {
    expect(jobHealth(await facts([]), POLICY, T0 + 1_000).state).toBe('never-run');
    expect(jobHealth(await facts([run(T0 + 2_000)]), POLICY, T0 + 3_999)).toMatchObject({
      state: 'on-time',
      unhealthy: false,
      lastSuccess: new Date(T0 + 2_003),
      missed: [],
    });
    const late = jobHealth(await facts([run(T0 + 2_000)]), POLICY, T0 + 4_600);
    expect(late).toMatchObject({ state: 'late', unhealthy: true, late: new Date(T0 + 4_000) });
    expect(jobHealth(await facts([run(T0 + 2_000)]), POLICY, T0 + 4_400).state).toBe('on-time');
  });

  it('lists each occurrence no node ran once the next came, with its time, and is missed until a success', async () => {
    // Runs at 2 s, then nothing for 10 s: the occurrences at 4..12 s passed unrun, 14 s is still due.
    const health = jobHealth(await facts([run(T0 + 2_000)]), POLICY, T0 + 14_100);
    expect(health.state).toBe('missed');
    const missed = [4, 6, 8, 10, 12].map((s) => new Date(T0 + s * 1_000));
    expect(health.missed).toEqual(missed);
    // After a new success the job is on time; the misses before it stay listed while the history has them.
    const after = jobHealth(await facts([run(T0 + 14_000), run(T0 + 2_000)]), POLICY, T0 + 14_100);
    expect(after).toMatchObject({ state: 'on-time', missed });
  });

  it('counts a run in progress and a failed run as started, not missed', async () => {
    const holder = { node: 'node-b', since: new Date(T0 + 4_002), ttl: 60_000 };
    expect(jobHealth(await facts([run(T0 + 2_000)], { holder }), POLICY, T0 + 8_100)).toMatchObject({
      missed: [new Date(T0 + 6_000)],
      late: null,
    });
    const failed = jobHealth(await facts([run(T0 + 4_000, 'failed'), run(T0 + 2_000)]), POLICY, T0 + 5_000);
    expect(failed).toMatchObject({ state: 'on-time', failuresInARow: 1, missed: [] });
  });

  it('is failing after failingAfter failed runs in a row, and paused above all', async () => {
    const recent = [run(T0 + 8_000, 'failed'), run(T0 + 6_000, 'crashed'), run(T0 + 4_000, 'failed'), run(T0 + 2_000)];
    expect(jobHealth(await facts(recent), POLICY, T0 + 9_000)).toMatchObject({ state: 'failing', failuresInARow: 3 });
    const paused = { actor: 'scheduler', reason: 'failing', at: new Date(T0) };
    expect(jobHealth(await facts(recent, { paused }), POLICY, T0 + 9_000).state).toBe('paused');
    // A resume starts the count anew.
    const resumed = [
      run(T0 + 10_000, 'failed'),
      { type: 'resume' as const, actor: 'ops', reason: null, at: new Date(T0 + 9_500), formerNode: null },
      ...recent,
    ];
    expect(jobHealth(await facts(resumed), POLICY, T0 + 11_000)).toMatchObject({ state: 'on-time', failuresInARow: 1 });
  });

  it("counts an occurrence's failed attempts (its retries) as one failure", async () => {
    const attempt = (occurrence: number, n: number): RunHistoryEntry => ({ ...run(occurrence, 'failed'), attempt: n });
    const recent = [attempt(T0 + 4_000, 3), attempt(T0 + 4_000, 2), attempt(T0 + 4_000, 1), attempt(T0 + 2_000, 1)];
    expect(jobHealth(await facts(recent), POLICY, T0 + 5_000)).toMatchObject({ state: 'on-time', failuresInARow: 2 });
    const third = [attempt(T0 + 6_000, 1), ...recent];
    expect(jobHealth(await facts(third), POLICY, T0 + 7_000)).toMatchObject({ state: 'failing', failuresInARow: 3 });
  });

  it('measures an @Interval job against its interval', async () => {
    const started = (at: number): RunHistoryEntry => ({ ...run(at), occurrence: null, startedAt: new Date(at) });
    const recent = [started(T0 + 1_000)];
    expect(jobHealth(await facts(recent, {}, INTERVAL), POLICY, T0 + 6_400).state).toBe('on-time');
    expect(jobHealth(await facts(recent, {}, INTERVAL), POLICY, T0 + 6_600)).toMatchObject({
      state: 'late',
      late: new Date(T0 + 6_000),
    });
    const missed = jobHealth(await facts(recent, {}, INTERVAL), POLICY, T0 + 16_600);
    expect(missed.missed).toEqual([new Date(T0 + 6_000), new Date(T0 + 11_000)]);
    expect(missed.late).toEqual(new Date(T0 + 16_000));
  });

  it('counts occurrences missed since the watch began for a job that never ran', async () => {
    expect(jobHealth(await facts([]), POLICY, T0 + 4_100).missed).toEqual([new Date(T0 + 2_000)]);
  });
});
