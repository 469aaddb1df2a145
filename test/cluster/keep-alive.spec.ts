import { endlessJob, runAfterKill } from './kill-handover.js';
import { isStartOf } from './message-matchers.js';
import { useWorkerCluster } from './use-worker-cluster.js';

/**
 * Long jobs with a renewing lease, across worker processes on the shared Redis: the lock lives as
 * long as its run, however long that is, and no longer than one lease once the node running it dies.
 */
describe('keepAlive across worker processes', () => {
  const INSTANCES = ['A', 'B', 'C'];
  const cluster = useWorkerCluster('keep-alive', INSTANCES);

  it('keeps a run of 3 leases to one worker, and after kill -9 hands the job on within a lease, not lockAtMostFor', async () => {
    const leaseMs = 1_000;
    const tickMs = 200;
    /** Process scheduling and one Redis round trip between the lock's expiry and the next run's start. */
    const toleranceMs = 500;
    const job = endlessJob('long-report', tickMs, { keepAlive: { lease: leaseMs }, lockAtMostFor: '1m' });
    const workers = await cluster.start(job);

    const first = await workers.waitFor(isStartOf(job.name), 5_000, 'the first run');
    const renewalsBy = (instance: string) =>
      workers
        .lockEvents(job.name)
        .flatMap(({ instance: from, event }) => (from === instance && event.type === 'extended' ? [event] : []));
    // The run's own lease renewals say when three leases have gone by.
    await workers.waitUntil(
      () => renewalsBy(first.instance).find((renewal) => renewal.at >= first.startedAt + 3 * leaseMs),
      3 * leaseMs + 5_000,
      'three leases of renewals',
    );

    expect(workers.starts(job.name)).toEqual([first]);
    // The others kept ticking and found the lock taken after its first lease would have run out
    // (so did the holder's own ticks: a new tick is not the run that holds the lock).
    const lockedOutAfterFirstLease = new Set(
      workers
        .lockEvents(job.name)
        .filter(
          ({ event }) => event.type === 'skipped' && event.reason === 'locked' && event.at > first.lockedAt! + leaseMs,
        )
        .map(({ instance }) => instance),
    );
    expect(INSTANCES.filter((instance) => !lockedOutAfterFirstLease.has(instance))).toEqual([]);

    const killedAt = Date.now();
    const next = await runAfterKill(workers, first, leaseMs + tickMs + 5_000);
    const lastRenewal = renewalsBy(first.instance).at(-1)!;

    expect(next.instance).not.toBe(first.instance);
    expect(next.startedAt - killedAt).toBeLessThanOrEqual(leaseMs + tickMs + toleranceMs);
    // Not earlier either: the dead node's last renewal held the lock to its end.
    expect(next.startedAt).toBeGreaterThanOrEqual(lastRenewal.lockedUntil - 20);
  }, 40_000);
});
