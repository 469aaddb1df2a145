import type { Redis } from 'ioredis';
import { InMemoryLockProvider, RedisLockProvider, type SimpleLock } from '../../lib/index.js';
import { type JobRecordReader, type RecoveringLockProvider } from '../../lib/provider/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { postgresFixture } from '../postgres/postgres-fixture.js';
import { deleteKeys, sharedRedis, uniquePrefix } from '../support/shared-redis.js';
import { pollUntil } from '../support/timing.js';

type OccurrenceProvider = RecoveringLockProvider & JobRecordReader;

/** Two nodes on one store, as the providers under test make them. */
interface Nodes {
  a: OccurrenceProvider;
  b: OccurrenceProvider;
  close(): Promise<void>;
}

const N = Date.parse('2026-01-01T00:00:10.000Z');
const NEXT = N + 10_000;
const config = (lockAtMostFor = 10_000) => ({ name: 'report', lockAtMostFor, lockAtLeastFor: 0 });

async function lockOf(claim: Awaited<ReturnType<OccurrenceProvider['lockOccurrence']>>): Promise<SimpleLock> {
  if (!('lock' in claim)) throw new Error(`expected the occurrence, got ${JSON.stringify(claim)}`);
  return claim.lock;
}

describe.each<[string, () => Nodes | Promise<Nodes>]>([
  [
    'RedisLockProvider',
    () => {
      const clients: Redis[] = [sharedRedis(), sharedRedis()];
      const keyPrefix = uniquePrefix('occurrence');
      const [a, b] = clients.map(
        (client, i) => new RedisLockProvider(client, { keyPrefix, lockedBy: `node-${'ab'[i]}` }),
      );
      return {
        a,
        b,
        async close() {
          await deleteKeys(clients[0], keyPrefix);
          clients.forEach((client) => client.disconnect());
        },
      };
    },
  ],
  [
    'InMemoryLockProvider',
    () => {
      // One store seen by two nodes: the same instance, told apart by lockedBy only in records.
      const store = new InMemoryLockProvider({ lockedBy: 'node-a' });
      return { a: store, b: store, close: async () => undefined };
    },
  ],
  [
    'PostgresLockProvider',
    async () => {
      const fixture = await postgresFixture('occurrence');
      const [a, b]: PostgresLockProvider[] = ['a', 'b'].map((node) => fixture.connect({ lockedBy: `node-${node}` }));
      // The table and a connection each, before the tests time their 50 ms locks.
      await Promise.all([a, b].map((node) => node.readJobRecord('warm-up')));
      return { a, b, close: () => fixture.close() };
    },
  ],
])('%s occurrence claims', (_, makeNodes) => {
  let nodes: Nodes;
  beforeEach(async () => {
    nodes = await makeNodes();
  });
  afterEach(() => nodes.close());

  it('claims an occurrence once: the second claim is refused as already-ran (running), then as already-ran (settled)', async () => {
    const lock = await lockOf(await nodes.a.lockOccurrence(config(), N));
    expect(await nodes.b.lockOccurrence(config(), N)).toEqual({ refused: 'already-ran', running: true });
    await lock.finish!('succeeded');
    // The lock is free now, but the occurrence was run: a late node must not run it again.
    expect(await nodes.b.lockOccurrence(config(), N)).toEqual({ refused: 'already-ran', running: false });
    expect(await nodes.b.lockOccurrence(config(), N - 10_000)).toEqual({ refused: 'already-ran', running: false });
    const next = await lockOf(await nodes.b.lockOccurrence(config(), NEXT));
    await next.unlock();
  });

  it('refuses a newer occurrence as locked while an earlier run still holds the lock', async () => {
    const lock = await lockOf(await nodes.a.lockOccurrence(config(), N));
    expect(await nodes.b.lockOccurrence(config(), NEXT)).toEqual({ refused: 'locked' });
    await lock.unlock();
    await (await lockOf(await nodes.b.lockOccurrence(config(), NEXT))).unlock();
  });

  it('records the run: occurrence, state, who, when, outcome', async () => {
    expect(await nodes.a.readJobRecord('report')).toBeUndefined();
    const before = Date.now();
    const lock = await lockOf(await nodes.a.lockOccurrence(config(), N));
    expect(await nodes.a.readJobRecord('report')).toMatchObject({
      occurrence: new Date(N),
      state: 'running',
      runBy: 'node-a',
      attempt: 1,
      held: true,
    });
    await lock.finish!('failed');
    const record = (await nodes.b.readJobRecord('report'))!;
    expect(record).toMatchObject({
      occurrence: new Date(N),
      state: 'failed',
      runBy: 'node-a',
      attempt: 1,
      held: false,
    });
    expect(record.startedAt.getTime()).toBeGreaterThanOrEqual(before - 1_000);
    expect(record.finishedAt!.getTime()).toBeGreaterThanOrEqual(record.startedAt.getTime());
  });

  it('re-runs an occurrence whose run died (lock gone, record running) once, naming the previous holder', async () => {
    await lockOf(await nodes.a.lockOccurrence(config(50), N)); // node a "dies": never releases
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 0)).toEqual({ refused: 'running' });
    const { value: recovered } = await pollUntil(async () => {
      const claim = await nodes.b.recoverOccurrence(config(), N, 2, 0);
      return 'lock' in claim ? claim : undefined;
    }, performance.now() + 1_000);
    expect(recovered).toMatchObject({ attempt: 2, previousHolder: 'node-a' });
    expect(await nodes.a.readJobRecord('report')).toMatchObject({
      state: 'running',
      attempt: 2,
      previousHolder: 'node-a',
      held: true,
    });
    await recovered!.lock.finish!('succeeded');
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 0)).toEqual({ refused: 'settled', state: 'succeeded' });
  });

  it('waits the grace once the lock is gone: a run whose node comes back within it records its outcome, not re-run', async () => {
    const run = await lockOf(await nodes.a.lockOccurrence(config(30), N)); // its release "fails": Redis was unreachable
    await pollUntil(async () => !(await nodes.a.readJobRecord('report'))!.held || undefined, performance.now() + 1_000);
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 60_000)).toEqual({ refused: 'running' });
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 60_000)).toEqual({ refused: 'running' });

    await expect(run.finish!('succeeded')).rejects.toMatchObject({ reason: 'expired' }); // the lock is gone, the record is its run's
    expect(await nodes.b.readJobRecord('report')).toMatchObject({ state: 'succeeded', runBy: 'node-a', attempt: 1 });
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 0)).toEqual({ refused: 'settled', state: 'succeeded' });
  });

  it('re-runs once the grace has passed since a recovery first found the lock gone', async () => {
    await lockOf(await nodes.a.lockOccurrence(config(30), N));
    await pollUntil(async () => !(await nodes.a.readJobRecord('report'))!.held || undefined, performance.now() + 1_000);
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 200)).toEqual({ refused: 'running' });
    const graceFrom = performance.now();
    const { value: recovered } = await pollUntil(async () => {
      const claim = await nodes.b.recoverOccurrence(config(), N, 2, 200);
      return 'lock' in claim ? claim : undefined;
    }, graceFrom + 2_000);
    expect(performance.now() - graceFrom).toBeGreaterThanOrEqual(190); // the store's clock and ours, a few ms apart at most
    expect(recovered).toMatchObject({ attempt: 2, previousHolder: 'node-a' });
    await recovered!.lock.unlock();
  });

  it('gives up after maxAttempts, marking the occurrence crashed', async () => {
    await lockOf(await nodes.a.lockOccurrence(config(30), N));
    await pollUntil(async () => !(await nodes.a.readJobRecord('report'))!.held || undefined, performance.now() + 1_000);
    expect(await nodes.b.recoverOccurrence(config(), N, 1, 0)).toEqual({ refused: 'settled', state: 'crashed' });
    expect(await nodes.b.readJobRecord('report')).toMatchObject({ state: 'crashed', held: false });
  });

  it('does not let a stale holder overwrite the record of the run that took over', async () => {
    const stale = await lockOf(await nodes.a.lockOccurrence(config(30), N));
    await pollUntil(async () => !(await nodes.a.readJobRecord('report'))!.held || undefined, performance.now() + 1_000);
    const recovered = await nodes.b.recoverOccurrence(config(), N, 2, 0);
    await expect(stale.finish!('succeeded')).rejects.toMatchObject({ reason: 'not-owner' });
    expect(await nodes.a.readJobRecord('report')).toMatchObject({ state: 'running', attempt: 2 });
    if ('lock' in recovered) await recovered.lock.unlock();
  });

  it('does not re-run an occurrence that moved on', async () => {
    await (await lockOf(await nodes.a.lockOccurrence(config(), N))).unlock();
    await (await lockOf(await nodes.a.lockOccurrence(config(), NEXT))).unlock();
    expect(await nodes.b.recoverOccurrence(config(), N, 2, 0)).toEqual({ refused: 'settled', state: '' });
  });
});
