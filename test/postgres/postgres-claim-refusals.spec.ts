import type { OccurrenceClaim } from '../../lib/core/provider/lock-provider.js';
import type { JobLockClaim } from '../../lib/operators/operator-abilities.js';
import { lockConfig, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import type { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
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

    const refusals = await race(racers, (racer, attempt) => racer.lockOccurrence(lockConfig(name, 2), attempt));

    expect(refusals.get('paused')).toBeUndefined();
    expect(refusals.get('locked')).toBeGreaterThan(0);
  });
});
