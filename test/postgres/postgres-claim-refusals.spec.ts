import type { OccurrenceClaim } from '../../lib/core/provider/lock-provider.js';
import type { JobLockClaim } from '../../lib/operators/operator-abilities.js';
import { lockConfig, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import type { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import type { ClaimRefusalCode } from '../../lib/providers/claim-refusals.js';
import { postgresTables } from '../../lib/providers/postgres/postgres-schema.js';
import { claimRefusal, postgresStatements } from '../../lib/providers/postgres/postgres-statements.js';
import { postgresPool } from '../support/shared-postgres.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';

/** Claims each racer makes: enough for locks of a few ms to expire inside some claim statements. */
const CLAIMS_PER_RACER = 1_500;

/** The refusals two providers get racing for one unpaused lock whose 2 ms leases keep expiring. */
async function race(
  racers: readonly PostgresLockProvider[],
  claim: (racer: PostgresLockProvider, attempt: number) => Promise<JobLockClaim | OccurrenceClaim>,
): Promise<Map<string, number>> {
  const refusals = new Map<string, number>();
  let attempts = 0;
  await Promise.all(
    racers.map(async (racer) => {
      for (let i = 0; i < CLAIMS_PER_RACER; i += 1) {
        const claimed = await claim(racer, ++attempts);
        const refused = 'refused' in claimed ? claimed.refused : 'taken';
        refusals.set(refused, (refusals.get(refused) ?? 0) + 1);
      }
    }),
  );
  return refusals;
}

describe('claims on PostgreSQL that race for one lock nobody paused', () => {
  let fixture: PostgresFixture;
  beforeEach(async () => {
    fixture = await postgresFixture('refusals');
  });
  afterEach(() => fixture.close());

  it("refuse a job's lock as 'locked', never 'paused', when it expires during the claim statement", async () => {
    const racers = [fixture.connect(), fixture.connect()];
    const name = uniqueLockName('job');

    const refusals = await race(racers, (racer) => racer.lockJob(lockConfig(name, 2), false));

    expect(refusals.get('paused')).toBeUndefined();
    expect(refusals.get('locked')).toBeGreaterThan(0);
  });

  it("refuse an occurrence as 'locked' or 'already-ran', never 'paused', when its lock expires during the claim", async () => {
    const racers = [fixture.connect(), fixture.connect()];
    const name = uniqueLockName('occurrence');

    const refusals = await race(racers, (racer, attempt) =>
      racer.lockOccurrence(lockConfig(name, 2), new Date(attempt)),
    );

    expect(refusals.get('paused')).toBeUndefined();
    expect(refusals.get('locked')).toBeGreaterThan(0);
  });
});

describe.each([
  { kind: 'an occurrence claim', statement: 'claimOccurrences', last: [2] },
  { kind: "a job's lock", statement: 'lockJobs', last: [false] },
] as const)('$kind on PostgreSQL that is refused', ({ statement, last }) => {
  let fixture: PostgresFixture;
  beforeEach(async () => {
    fixture = await postgresFixture('refused-claim');
  });
  afterEach(() => fixture.close());

  it("holds no row lock, so the holder's release does not queue behind it", async () => {
    const holder = fixture.connect();
    const name = uniqueLockName('occurrence');
    const claimed = await holder.lockOccurrence(lockConfig(name, 60_000), new Date(1));
    expect('lock' in claimed).toBe(true);
    const { text } = postgresStatements(postgresTables({ schema: fixture.schema, tablePrefix: 'scheduler_lock_' }))[
      statement
    ];
    const pool = postgresPool({ max: 2 });
    const [claimer, releaser] = await Promise.all([pool.connect(), pool.connect()]);
    try {
      // Another node's claim, its transaction left open as a slow burst's would be.
      await claimer.query('BEGIN');
      const values = [[name], ['owner:1:other:node-x'], ['node-x'], [60_000], last];
      const { rows } = await claimer.query<{ refusal: ClaimRefusalCode | null }>(text, values);
      expect(rows.map((row) => claimRefusal(row))).toEqual(['locked']);

      // NOWAIT fails at once (55P03) while any other transaction holds a lock on the row.
      const locks = `"${fixture.schema}".scheduler_lock_locks`;
      const locked = await releaser.query(`SELECT name FROM ${locks} WHERE name = $1 FOR UPDATE NOWAIT`, [name]);
      expect(locked.rows).toEqual([{ name }]);
    } finally {
      await claimer.query('ROLLBACK');
      claimer.release();
      releaser.release();
      await pool.end();
    }
  });
});
