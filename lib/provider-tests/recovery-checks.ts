import { strict as assert } from 'node:assert';
import type { JobRecord } from '../core/provider/lock-provider.js';
import { canReadJobRecords, type RecoveringLockProvider } from '../core/provider/provider-abilities.js';
import { uniqueLockName } from './lock-probes.js';
import { claimed, finish, jobConfig, lockGone, NEXT_OCCURRENCE, OCCURRENCE } from './occurrence-probes.js';
import type { CheckDefinition, KitClock } from './provider-subject.js';
import { pollUntil } from './timing.js';

type Check = CheckDefinition<RecoveringLockProvider>;

/** A lock this short dies with its node in these checks. */
const DYING_RUN = 30;

/** Claims a fresh job's occurrence on `provider` for {@link DYING_RUN} ms and resolves once its lock is gone. */
async function diedRun(clock: KitClock, provider: RecoveringLockProvider) {
  const name = uniqueLockName('job');
  const takenAt = clock.now();
  const lock = claimed(await provider.lockOccurrence(jobConfig(name, DYING_RUN), OCCURRENCE));
  await lockGone(clock, provider, name, takenAt, DYING_RUN);
  return { name, lock };
}

/** The fields of `name`'s job record that `expected` names, where the provider reads records; else nothing. */
async function assertRecord(provider: RecoveringLockProvider, name: string, expected: Partial<JobRecord>) {
  if (!canReadJobRecords(provider)) return;
  const record = await provider.readJobRecord(name);
  if (!record) throw new assert.AssertionError({ message: `no job record of ${name}` });
  const seen = Object.fromEntries(Object.keys(expected).map((key) => [key, record[key as keyof JobRecord]]));
  assert.deepEqual(seen, expected, `the job record of ${name}`);
}

/** `recoverOccurrence()`: an occurrence whose node died is re-run once, after the grace, up to maxAttempts. */
export const recoveryChecks: Check[] = [
  {
    name: 'refuses to re-run an occurrence whose run still holds its lock (running)',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const lock = claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE));
      assert.deepEqual(await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0), { refused: 'running' });
      await finish(lock, 'succeeded');
    },
  },
  {
    name: 're-runs an occurrence whose run died (lock gone, record running) once, naming the previous holder',
    async run({ provider, other, clock }) {
      const name = uniqueLockName('job');
      const takenAt = clock.now();
      claimed(await provider.lockOccurrence(jobConfig(name, DYING_RUN), OCCURRENCE)); // its node "dies"
      const diedRunBy = canReadJobRecords(provider) ? (await provider.readJobRecord(name))?.node : undefined;
      const { value: recovered } = await pollUntil(
        clock,
        async () => {
          const claim = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0);
          return 'lock' in claim ? claim : undefined;
        },
        takenAt + DYING_RUN + 1_000,
      );
      assert.equal(recovered.attempt, 2);
      assert.ok(recovered.previousNode.length > 0, 'a recovery names who ran the attempt before');
      if (diedRunBy !== undefined) assert.equal(recovered.previousNode, diedRunBy, 'the previous holder');
      await assertRecord(provider, name, { state: 'running', attempt: 2, held: true, previousNode: diedRunBy });
      await finish(recovered.lock, 'succeeded');
      const settled = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0);
      assert.deepEqual(settled, { refused: 'settled', state: 'succeeded' });
    },
  },
  {
    name: 'waits the grace once the lock is gone: a run whose node comes back within it records its outcome',
    async run({ provider, other, clock }) {
      const { name, lock } = await diedRun(clock, provider); // its release "failed": the store was unreachable
      const grace = 60_000;
      for (let look = 0; look < 2; look += 1) {
        assert.deepEqual(await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, grace), { refused: 'running' });
      }
      // The lock is gone, the record is still its run's.
      await assert.rejects(finish(lock, 'succeeded'), { name: 'LockNotHeldError', reason: 'expired' });
      await assertRecord(other, name, { state: 'succeeded', attempt: 1 });
      const settled = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0);
      assert.deepEqual(settled, { refused: 'settled', state: 'succeeded' });
    },
  },
  {
    name: 're-runs once the grace has passed since a recovery first found the lock gone',
    async run({ provider, other, clockTolerance, clock }) {
      const { name } = await diedRun(clock, provider);
      const grace = 200;
      // Taken before the first look: the store starts the grace when that look finds the lock gone, no earlier.
      const graceFrom = clock.now();
      assert.deepEqual(await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, grace), { refused: 'running' });
      const { value: recovered, at } = await pollUntil(
        clock,
        async () => {
          const claim = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, grace);
          return 'lock' in claim ? claim : undefined;
        },
        graceFrom + 2_000,
      );
      assert.ok(at - graceFrom >= grace - 2 * clockTolerance, `re-run ${at - graceFrom} ms into a ${grace} ms grace`);
      assert.equal(recovered.attempt, 2);
      await recovered.lock.unlock();
    },
  },
  {
    name: 'gives up after maxAttempts, marking the occurrence crashed',
    async run({ provider, other, clock }) {
      const { name } = await diedRun(clock, provider);
      const given = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 1, 0);
      assert.deepEqual(given, { refused: 'settled', state: 'crashed' });
      await assertRecord(other, name, { state: 'crashed', held: false });
    },
  },
  {
    name: 'does not let a stale holder overwrite the record of the run that took over',
    async run({ provider, other, clock }) {
      const { name, lock: stale } = await diedRun(clock, provider);
      const recovered = claimed(await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0));
      await assert.rejects(finish(stale, 'succeeded'), { name: 'LockNotHeldError', reason: 'not-owner' });
      await assertRecord(provider, name, { state: 'running', attempt: 2 });
      await recovered.unlock();
    },
  },
  {
    name: 'does not re-run an occurrence that moved on',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      await claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE)).unlock();
      await claimed(await provider.lockOccurrence(jobConfig(name), NEXT_OCCURRENCE)).unlock();
      const claim = await other.recoverOccurrence(jobConfig(name), OCCURRENCE, 2, 0);
      assert.deepEqual(claim, { refused: 'settled', state: '' });
    },
  },
];
