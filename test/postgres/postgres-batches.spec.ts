import type { LockConfiguration, SimpleLock } from '../../lib/provider/index.js';
import type { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import type { RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';
import { countStatements } from './statement-counter.js';

const JOBS = 50;
const OCCURRENCE = new Date(1_700_000_000_000);

const job = (i: number): LockConfiguration => ({ name: `tenant-${i}`, lockAtMostFor: 10_000, lockAtLeastFor: 0 });
const names = Array.from({ length: JOBS }, (_, i) => i);

describe('PostgreSQL statements batched per burst', () => {
  let fixture: PostgresFixture;
  let provider: PostgresLockProvider;
  let statements: ReturnType<typeof countStatements>;
  beforeEach(async () => {
    fixture = await postgresFixture('batches');
    provider = fixture.connect({ node: 'node-a' });
    statements = countStatements(fixture.poolOf(provider));
    await provider.createTables();
  });
  afterEach(() => fixture.close());

  it(`claims the occurrences of ${JOBS} jobs due together in one statement, each with its own reply`, async () => {
    await provider.operatorProvider().pause('tenant-7', { actor: 'ops' });
    const held = await provider.lockJob(job(9), false);
    statements.take();

    const claims = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));

    expect(statements.take()).toBe(1);
    expect(claims[7]).toEqual({ refused: 'paused' });
    expect(claims[9]).toEqual({ refused: 'locked' });
    const locks = claims.flatMap((claim) => ('lock' in claim ? [claim.lock] : []));
    expect(locks).toHaveLength(JOBS - 2);
    const again = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));
    expect(again.filter((claim) => 'refused' in claim && claim.refused === 'already-ran')).toHaveLength(JOBS - 2);
    expect('lock' in held).toBe(true);
  });

  it(`finishes ${JOBS} runs that end together in one statement, each in its job's history and record`, async () => {
    const claims = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));
    const locks = claims.map((claim) => (claim as { lock: SimpleLock }).lock);
    statements.take();

    const report = { startedAt: new Date(), durationMs: 3, attempt: 1, occurrence: OCCURRENCE };
    await Promise.all(locks.map((lock, i) => lock.finish!(i % 2 === 0 ? 'succeeded' : 'failed', report)));

    expect(statements.take()).toBe(1);
    const store = provider.operatorProvider();
    const histories = await Promise.all(names.map((i) => store.history(`tenant-${i}`, 5)));
    histories.forEach((history, i) =>
      expect(history).toMatchObject([{ type: 'run', outcome: i % 2 === 0 ? 'succeeded' : 'failed', node: 'node-a' }]),
    );
    expect(await provider.readJobRecord('tenant-1')).toMatchObject({ state: 'failed', held: false });
  });

  it(`releases ${JOBS} claimed occurrences unused (unlock(), as after a late answer) in one statement`, async () => {
    const claims = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));
    const locks = claims.map((claim) => (claim as { lock: SimpleLock }).lock);
    statements.take();

    await Promise.all(locks.map((lock) => lock.unlock()));

    expect(statements.take()).toBe(1);
    // Nothing recorded: the record still reads running without a lock, as after a crash.
    expect(await provider.readJobRecord('tenant-3')).toMatchObject({ state: 'running', held: false });
    const again = await provider.lockOccurrence(job(3), OCCURRENCE);
    expect(again).toMatchObject({ refused: 'already-ran', running: true });
  });

  it('takes job locks due together in one statement; a burst that names a lock twice goes in two rounds', async () => {
    statements.take();
    const together = await Promise.all(names.map((i) => provider.lockJob(job(i), false)));
    expect(statements.take()).toBe(1);
    expect(together.every((claim) => 'lock' in claim)).toBe(true);

    for (const claim of together) if ('lock' in claim) await claim.lock.unlock();
    statements.take();
    const twice = await Promise.all([provider.lockJob(job(0), false), provider.lockJob(job(0), false)]);
    expect(statements.take()).toBe(2);
    expect(twice.map((claim) => ('lock' in claim ? 'lock' : claim.refused))).toEqual(['lock', 'locked']);
  });

  it('keeps a bounded history: a ring of historyLimit entries per job, newest first', async () => {
    const small = fixture.connect({ node: 'node-a', historyLimit: 3 });
    for (let run = 1; run <= 5; run += 1) {
      const claim = await small.lockJob(job(0), false);
      await (claim as { lock: SimpleLock }).lock.finish!('succeeded', {
        startedAt: new Date(run),
        durationMs: 1,
        attempt: 1,
      });
    }
    const history = await small.operatorProvider().history('tenant-0', 10);
    expect(history.map((entry) => (entry as RunHistoryEntry).startedAt)).toEqual([5, 4, 3].map((ms) => new Date(ms)));
    const { rows } = await fixture.admin.query(
      `SELECT count(*)::int AS rows FROM "${fixture.schema}".scheduler_lock_history WHERE name = 'tenant-0'`,
    );
    expect(rows).toEqual([{ rows: 3 }]);
  });

  it("gives a burst's statement a statement_timeout grown with its size: 500 claims get twice one claim's", async () => {
    const node = fixture.connect({ node: 'node-b', statementTimeout: 300 });
    // A free row (taken and released): a statement that could take it waits on another transaction's row lock.
    const first = await node.lockJob(job(0), false);
    if (!('lock' in first)) throw new Error(`tenant-0 was refused: ${first.refused}`);
    await first.lock.unlock();
    const holder = await fixture.admin.connect();
    try {
      await holder.query('BEGIN');
      await holder.query(`SELECT 1 FROM "${fixture.schema}".scheduler_lock_locks WHERE name = 'tenant-0' FOR UPDATE`);
      // The burst's statement waits on that row until the server cancels it; load only makes the wait longer.
      const startedAt = performance.now();
      const failure = await Promise.all(Array.from({ length: 500 }, (_, i) => node.lockJob(job(i), false))).catch(
        (error: Error) => error,
      );
      expect(performance.now() - startedAt).toBeGreaterThanOrEqual(600);
      expect(String(failure)).toContain('no answer within 600ms (statement_timeout)');
    } finally {
      await holder.query('ROLLBACK');
      holder.release();
    }
  });
});
