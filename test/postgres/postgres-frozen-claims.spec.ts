import type pg from 'pg';
import { LockProviderUnavailableError } from '../../lib/index.js';
import type { SimpleLock } from '../../lib/core/provider/lock-provider.js';
import { lockConfig } from '../../lib/provider-tests/lock-probes.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { startPrivatePostgres, type PrivatePostgres } from '../support/private-postgres.js';
import { postgresPool } from '../support/shared-postgres.js';
import { waitUntil } from '../support/wait-until.js';

/** Ten minutes: a lock taken by a given-up statement and never released would block the job all that time. */
const LOCK_AT_MOST_FOR = 600_000;
/** The node gives a silent connection up after statement_timeout + 1 s. */
const STATEMENT_TIMEOUT = 300;

/** A way to claim lock `name` on a node, resolving to the lock or to nothing when refused. */
type Claim = (node: PostgresLockProvider, name: string) => Promise<SimpleLock | undefined>;

let occurrences = 0;
const CLAIMS: [string, Claim][] = [
  ['lockJob', (node, name) => node.lockJob(lockConfig(name, LOCK_AT_MOST_FOR), false).then(lockOf)],
  [
    'lockOccurrence',
    (node, name) => node.lockOccurrence(lockConfig(name, LOCK_AT_MOST_FOR), new Date(++occurrences)).then(lockOf),
  ],
  ['lock', (node, name) => node.lock(lockConfig(name, LOCK_AT_MOST_FOR))],
];

/** A run's report, for a release that writes a history entry. */
const RUN = { startedAt: new Date(), durationMs: 5, attempt: 1 };

function lockOf(claim: { lock: SimpleLock } | { refused: string }): SimpleLock | undefined {
  return 'lock' in claim ? claim.lock : undefined;
}

describe('a lock taken by a claim its node gave up on, on a PostgreSQL frozen (SIGSTOP) past the deadline', () => {
  let server: PrivatePostgres;
  let pools: pg.Pool[] = [];

  beforeAll(async () => {
    server = await startPrivatePostgres();
  });
  afterEach(async () => {
    await server.resume();
    await Promise.all(pools.map((pool) => pool.end()));
    pools = [];
  });
  afterAll(() => server?.remove());

  /** `count` nodes, each on a pool of one connection, already used (tables made, connection open). */
  async function nodes(count: number, name: string): Promise<PostgresLockProvider[]> {
    const made = Array.from({ length: count }, (_, i) => {
      const pool = postgresPool({ port: server.port, database: 'postgres', max: 1, connectionTimeoutMillis: 500 });
      pools.push(pool);
      return new PostgresLockProvider(pool, { node: `node-${i + 1}`, statementTimeout: STATEMENT_TIMEOUT });
    });
    for (const node of made) await node.readJobRecord(name);
    return made;
  }

  /** Freezes the server while every node claims `name`, until each gives its claim up; then thaws it. */
  async function claimWhileFrozen(claim: Claim, cluster: readonly PostgresLockProvider[], name: string) {
    await server.pause();
    const failures = await Promise.all(cluster.map((node) => claim(node, name).catch((error: unknown) => error)));
    await server.resume();
    for (const failure of failures) expect(failure).toMatchObject({ unanswered: true });
    expect(failures[0]).toBeInstanceOf(LockProviderUnavailableError);
  }

  /** Each node claims `name` in turn, as ticks would, until one takes it; resolves to that lock. */
  async function nextLock(claim: Claim, cluster: readonly PostgresLockProvider[], name: string) {
    let taken: SimpleLock | undefined;
    let turn = 0;
    await waitUntil(
      async () => (taken = await claim(cluster[turn++ % cluster.length], name)) !== undefined,
      `a node takes "${name}" again, long before its lockAtMostFor`,
      { timeoutMs: 15_000, intervalMs: 50 },
    );
    return taken!;
  }

  it.each(CLAIMS)('%s on one node: released once the store answers again', async (label, claim) => {
    const name = `frozen-${label}`;
    const [node] = await nodes(1, name);
    const before = (await claim(node, name))!;
    await before.unlock();

    await claimWhileFrozen(claim, [node], name);
    const after = await nextLock(claim, [node], name);

    // The given-up claim did take the lock when the server thawed: the fence counts it.
    expect(after.fencingToken).toBe(before.fencingToken! + 2);
    await after.unlock();
  });

  it('lockJob on three nodes: the node whose claim took the lock releases it once the store answers', async () => {
    const name = 'frozen-three';
    const cluster = await nodes(3, name);
    const before = (await CLAIMS[0][1](cluster[0], name))!;
    await before.unlock();

    await claimWhileFrozen(CLAIMS[0][1], cluster, name);
    const after = await nextLock(CLAIMS[0][1], cluster, name);

    expect(after.fencingToken).toBe(before.fencingToken! + 2);
    await after.unlock();
  });

  it.each([
    ['unlock() of a plain lock', 'lock', (lock: SimpleLock) => lock.unlock()],
    ['finish() of a job lock, with its history entry', 'lockJob', (lock: SimpleLock) => lock.finish!('succeeded', RUN)],
  ] as const)('%s that never reached the frozen server: the lock is free once it answers', async (_, by, release) => {
    const name = `frozen-release-${by}`;
    const claim = CLAIMS.find(([label]) => label === by)![1];
    const [node] = await nodes(1, name);
    const lock = (await claim(node, name))!;
    // The node's one connection ends, so the release must open another while the server is frozen: it never runs.
    const admin = postgresPool({ port: server.port, database: 'postgres', max: 1 });
    pools.push(admin);
    const [{ pid }] = (await pools[0].query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;
    await admin.query('SELECT pg_terminate_backend($1)', [pid]);
    await waitUntil(() => pools[0].totalCount === 0, "the node's pool saw its connection end");

    await server.pause();
    const failure = await release(lock).catch((error: unknown) => error);
    await server.resume();
    expect(failure).toBeInstanceOf(LockProviderUnavailableError);

    const after = await nextLock(claim, [node], name);
    expect(after.fencingToken).toBeGreaterThan(lock.fencingToken!);
    await after.unlock();
  });

  it('a renewal given up on and run late, after the run released its lock, is undone once its backend is gone', async () => {
    const name = 'frozen-renewal';
    const [node] = await nodes(1, name);
    const admin = postgresPool({ port: server.port, database: 'postgres', max: 1 });
    pools.push(admin);
    const lock = (await node.lock(lockConfig(name, LOCK_AT_MOST_FOR, 20_000)))!;
    const [{ pid }] = (await pools[0].query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows;

    process.kill(pid, 'SIGSTOP'); // that connection's backend alone: the server answers the release
    try {
      const failure = await node.renewLeases([{ lock, ttl: LOCK_AT_MOST_FOR }]).catch((error: unknown) => error);
      expect(failure).toMatchObject({ unanswered: true });
      await lock.unlock(); // kept until lockAtLeastFor, 20 s after it was taken
    } finally {
      process.kill(pid, 'SIGCONT');
    }
    const query = (text: string, values: unknown[]) => admin.query(text, values).then(({ rows }) => rows);
    await waitUntil(
      async () => (await query('SELECT 1 FROM pg_stat_activity WHERE pid = $1', [pid])).length === 0,
      'the backend of the given-up renewal ran it and exited',
    );

    await waitUntil(async () => {
      const [row] = await query(
        `SELECT lock_until - locked_at < interval '1 minute' AS short FROM public.scheduler_lock_locks WHERE name = $1`,
        [name],
      );
      return row.short === true;
    }, 'the late renewal, 10 minutes on a released lock, is undone');
  });
});
