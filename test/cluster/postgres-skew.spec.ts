import { ensureLibfaketime, faketimeEnv } from '../chaos/faketime.js';
import type { WorkerJobSpec } from './fixtures/worker-protocol.js';
import {
  fireTimes,
  forEachOccurrence,
  iso,
  nextFireTime,
  outcomesByOccurrence,
  runsPerOccurrence,
  tickOutcomes,
} from './occurrence-analysis.js';
import { overlappingPairs, runSpans } from './run-analysis.js';
import { useWorkerCluster } from './use-worker-cluster.js';

/** Each worker's wall clock against the machine's (libfaketime; the database keeps the machine's). */
const SKEWS: Record<string, number> = { behind: -4_000, exact: 0, ahead: 4_000 };
const INSTANCES = Object.keys(SKEWS);
const LIBFAKETIME = ensureLibfaketime((line) => process.stderr.write(`${line}\n`));

/**
 * Three worker processes on the shared PostgreSQL whose clocks are 4 s behind, exact and 4 s ahead (libfaketime,
 * as the chaos soak skews them): each cron occurrence runs once, and a lock's expiry is the database's, so the
 * node 8 s ahead of another never sees that node's lock as expired.
 */
describe('three worker processes on PostgreSQL with clocks 4 s apart (libfaketime)', () => {
  const cluster = useWorkerCluster('pg-skew', INSTANCES, 'PostgreSQL', (instance) =>
    SKEWS[instance] === 0 ? {} : faketimeEnv(LIBFAKETIME, SKEWS[instance]),
  );

  it('runs each occurrence once, and never overlaps a lock held by a node on another clock', async () => {
    const gapMs = 10_000;
    const once: WorkerJobSpec = { name: 'skewed-once', schedule: { cron: '*/10 * * * * *' }, maxClockSkew: '4s' };
    // Held for 1.5 s of a 3 s lockAtMostFor: a node's clock read against the lock would see it expired 4 s early
    // (the node ahead) or 4 s late (behind), and the nodes' runs would overlap.
    const held: WorkerJobSpec = {
      name: 'skewed-held',
      schedule: { intervalMs: 300 },
      occurrence: false,
      lockAtMostFor: '3s',
      runForMs: 1_500,
    };
    const workers = await cluster.start(once, held);

    // From the first fire time that even the node furthest ahead reaches after all nodes are up.
    const window = fireTimes(nextFireTime(Date.now() + SKEWS.ahead, gapMs), 3, gapMs);
    const last = window.at(-1)!;
    await workers.waitUntil(
      () => {
        const ticks = tickOutcomes(workers, once.name, gapMs).filter((tick) => tick.occurrence === last);
        return new Set(ticks.map((tick) => tick.instance)).size === INSTANCES.length || undefined;
      },
      last - SKEWS.behind - Date.now() + 10_000,
      `every tick of ${iso(last)}`,
    );

    expect(runsPerOccurrence(workers.starts(once.name), window)).toEqual(forEachOccurrence(window, 1));
    expect(outcomesByOccurrence(tickOutcomes(workers, once.name, gapMs), window)).toEqual(
      forEachOccurrence(window, ['already-ran', 'already-ran', 'ran']),
    );

    // The held job's runs on the machine's clock: no two overlap, and every node ran it or found it locked.
    const spans = runSpans(workers.starts(held.name), workers.runs(held.name))
      .map((span) => ({
        ...span,
        startedAt: span.startedAt - SKEWS[span.instance],
        endedAt: span.endedAt - SKEWS[span.instance],
      }))
      .sort((a, b) => a.startedAt - b.startedAt);
    expect(spans.length).toBeGreaterThanOrEqual(5);
    expect(overlappingPairs(spans)).toEqual([]);
    const contenders = workers
      .lockEvents(held.name)
      .filter(({ event }) => event.type === 'acquired' || (event.type === 'skipped' && event.reason === 'locked'))
      .map(({ instance }) => instance);
    expect(new Set(contenders)).toEqual(new Set(INSTANCES));
    expect(new Set(spans.map((span) => span.instance)).size).toBeGreaterThanOrEqual(2);
  }, 120_000);
});
