import { setTimeout as sleep } from 'node:timers/promises';
import { assertStrictlyIncreasing, lockConfig } from '../../lib/provider-tests/lock-probes.js';
import type { SimpleLock } from '../../lib/provider/index.js';
import type { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { DEFAULT_STATEMENT_TIMEOUT } from '../../lib/providers/postgres/postgres-options.js';
import { settleDelay } from '../../lib/providers/postgres/postgres-released-names.js';
import { waitUntil } from '../support/wait-until.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';

/** Distinct lock names a busy app may use once each (`executeWithLock` with an id in the name). */
const NAMES = 10_000;
/** Names per test: each test's work fits Jest's timeout on a busy machine. */
const SLICE = 2_000;
/** Names taken at once (the node's pool serves them in turn). */
const BATCH = 200;

let fixture: PostgresFixture;
let provider: PostgresLockProvider;
/** A fresh schema and node; the default statement timeout, so a released row may be deleted 3 s after it. */
async function open(): Promise<void> {
  fixture = await postgresFixture('leftovers');
  provider = fixture.connect();
}

/** The rows of the locks table. */
async function rowsLeft(): Promise<number> {
  const { rows } = await fixture.admin.query<{ count: string }>(`SELECT count(*) FROM ${provider.tables.locks}`);
  return Number(rows[0].count);
}

/** When each name was released (`performance.now()` once its release answered), over every slice. */
const releasedAt: number[] = [];

/**
 * Takes and releases names `order-<from>` to `order-<to - 1>`, every tenth by owner, the rest by lock object.
 * Resolves to when its last batch started.
 */
async function takeAndRelease(from: number, to: number): Promise<number> {
  let lastBatch = performance.now();
  for (let start = from; start < to; start += BATCH) {
    lastBatch = performance.now();
    await Promise.all(
      Array.from({ length: Math.min(BATCH, to - start) }, async (_, i) => {
        const name = `order-${start + i}`;
        const owned = name.endsWith('7');
        const lock = await provider.lock(lockConfig(name), owned ? { owner: `worker-${name}` } : undefined);
        if (!lock) throw new Error(`${name} was held`);
        if (owned) expect(await provider.releaseByOwner(name, `worker-${name}`)).toBe('released');
        else await lock.unlock();
        releasedAt.push(performance.now());
      }),
    );
  }
  return lastBatch;
}

describe(`PostgresLockProvider: ${NAMES} distinct names taken and released leave no row behind`, () => {
  beforeAll(open);
  afterAll(() => fixture.close());

  const slices = Array.from({ length: NAMES / SLICE }, (_, i) => [i * SLICE, (i + 1) * SLICE] as const);
  it.each(slices)('takes and releases names %i to %i, by lock object or by owner', async (from, to) => {
    const lastBatch = await takeAndRelease(from, to);
    // The node deletes released rows as it goes, once they are a settle delay old: the last batch's releases
    // deleted every row released before that, whichever slice it was in, however fast the slices ran.
    const settledBefore = lastBatch - settleDelay(DEFAULT_STATEMENT_TIMEOUT);
    const recent = releasedAt.filter((at) => at > settledBefore).length;
    expect(await rowsLeft()).toBeLessThanOrEqual(recent);
  });

  it('has deleted every released row once their settle delay has passed', async () => {
    // Time is the subject: nothing announces that the delay has passed. Past it, the node's next release deletes
    // every row it released, however many fell within one delay (it remembers up to 10,000 names).
    await sleep(Math.max(0, Math.max(...releasedAt) + settleDelay(DEFAULT_STATEMENT_TIMEOUT) - performance.now()));
    await (await provider.lock(lockConfig('flush')))!.unlock();
    expect(await rowsLeft()).toBe(1); // the flush's own row, deleted by the node's next release
  });
});

describe('PostgresLockProvider: a plain lock leaves nothing behind once it is free', () => {
  beforeEach(open);
  afterEach(() => fixture.close());

  it("keeps a lockAtLeastFor lock's row while it is held, and a job's row with its record", async () => {
    const kept = await provider.lock(lockConfig('kept', 60_000, 30_000));
    await kept!.unlock();
    const job = await provider.lockOccurrence(lockConfig('job'), new Date(Date.UTC(2026, 0, 1)));
    await ('lock' in job ? job.lock.unlock() : Promise.reject(new Error('the occurrence was refused')));
    const flush = async () => {
      await (await provider.lock(lockConfig('flush')))?.unlock();
      return (await rowsLeft()) <= 3;
    };
    await waitUntil(flush, 'the flush row was deleted', { timeoutMs: 20_000, intervalMs: 200 });
    expect(await provider.lock(lockConfig('kept'))).toBeUndefined();
    expect((await provider.readJobRecord('job'))?.state).toBe('running');
  });

  it('draws fencing tokens that keep growing across releases and expiries of one name', async () => {
    const tokens: (number | undefined)[] = [];
    for (let i = 0; i < 100; i++) {
      const lock = await provider.lock(lockConfig('hot'));
      tokens.push(lock!.fencingToken);
      await lock!.unlock();
    }
    tokens.push((await provider.lock(lockConfig('hot', 5)))!.fencingToken);
    // Expiry is the subject: the row's lock_until passes on the database's clock, which nothing announces.
    let after: SimpleLock | undefined;
    await waitUntil(async () => (after = await provider.lock(lockConfig('hot'))) !== undefined, 'the lock expired');
    tokens.push(after!.fencingToken);
    assertStrictlyIncreasing(tokens);
    expect(Number.isSafeInteger(tokens.at(-1))).toBe(true);
  });
});
