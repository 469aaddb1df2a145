import { strict as assert } from 'node:assert';
import { canRecoverOccurrences, type RetryingLockProvider } from '../core/provider/provider-abilities.js';
import { hasOperatorProvider } from '../operators/operator-abilities.js';
import { uniqueLockName } from './lock-probes.js';
import { claimed, finish, jobConfig, lockGone, NEXT_OCCURRENCE, OCCURRENCE } from './occurrence-probes.js';
import type { CheckDefinition } from './provider-subject.js';
import { pollUntil } from './timing.js';

type Check = CheckDefinition<RetryingLockProvider>;

/** A lock this short dies with its node in these checks. */
const DYING_RUN = 30;

/** A backoff no check waits out. */
const LONG_BACKOFF = 60_000;

/** A fresh job whose occurrence's first attempt failed on `provider`. */
async function failedOnce(provider: RetryingLockProvider): Promise<string> {
  const name = uniqueLockName('job');
  await finish(claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE)), 'failed');
  return name;
}

/** `retryOccurrence()`: a failed occurrence is retried after its backoff, once per attempt, up to maxAttempts. */
export const retryChecks: Check[] = [
  {
    name: 'refuses to retry an occurrence while its attempt runs (running), and one that succeeded (settled)',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const lock = claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE));
      assert.deepEqual(await other.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0), { refused: 'running' });
      await finish(lock, 'succeeded');
      const settled = await other.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0);
      assert.deepEqual(settled, { refused: 'settled', state: 'succeeded' });
    },
  },
  {
    name: 'retries a failed occurrence once per attempt across nodes, naming who ran the failed one',
    async run({ provider, other, connect }) {
      const name = await failedOnce(provider);
      const nodes = [provider, other, await connect()];
      const claims = await Promise.all(nodes.map((node) => node.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0)));
      const taken = claims.filter((claim) => 'lock' in claim);
      const seen = claims.map((claim) => ('lock' in claim ? 'lock' : JSON.stringify(claim)));
      assert.equal(taken.length, 1, `one retry of attempt 2, got ${seen.join(', ')}`);
      const [retry] = taken as Extract<(typeof taken)[number], { lock: unknown }>[];
      assert.equal(retry.attempt, 2);
      assert.ok(retry.previousNode.length > 0, 'a retry names who ran the attempt before');
      for (const claim of claims.filter((each) => !('lock' in each))) assert.deepEqual(claim, { refused: 'running' });
      await finish(retry.lock, 'failed');
      const third = claimed(await other.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0));
      await finish(third, 'failed');
      // Three attempts started: no fourth.
      const spent = await provider.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0);
      assert.deepEqual(spent, { refused: 'settled', state: 'failed' });
    },
  },
  {
    name: "waits the backoff after a failed attempt, by the store's clock",
    async run({ provider, other, clockTolerance, clock }) {
      // Taken before the attempt fails: the store's clock reads no earlier when it records the failure.
      const failedAt = clock.now();
      const name = await failedOnce(provider);
      assert.deepEqual(await other.retryOccurrence(jobConfig(name), OCCURRENCE, 2, LONG_BACKOFF), {
        refused: 'running',
      });
      const backoff = 200;
      const { value: retry, at } = await pollUntil(
        clock,
        async () => {
          const claim = await other.retryOccurrence(jobConfig(name), OCCURRENCE, 2, backoff);
          return 'lock' in claim ? claim : undefined;
        },
        failedAt + 2_000,
      );
      assert.ok(
        at - failedAt >= backoff - 2 * clockTolerance,
        `retried ${at - failedAt} ms into a ${backoff} ms backoff`,
      );
      await retry.lock.unlock();
    },
  },
  {
    name: 'doubles the backoff with each attempt',
    async run({ provider, other, clockTolerance, clock }) {
      const name = await failedOnce(provider);
      const backoff = 300;
      const second = claimed(await other.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0));
      const failedAt = clock.now();
      await finish(second, 'failed');
      // Attempt 3 waits 2 × the backoff after attempt 2 failed, not the backoff.
      const { at } = await pollUntil(
        clock,
        async () => {
          const claim = await provider.retryOccurrence(jobConfig(name), OCCURRENCE, 3, backoff);
          return 'lock' in claim ? claim : undefined;
        },
        failedAt + 2_000,
      );
      const waited = at - failedAt;
      assert.ok(waited >= 2 * backoff - 2 * clockTolerance, `attempt 3 ${waited} ms after attempt 2 failed`);
    },
  },
  {
    name: 'does not retry an occurrence that moved on, nor one of a paused job',
    async run({ provider, other }) {
      const name = await failedOnce(provider);
      await claimed(await other.lockOccurrence(jobConfig(name), NEXT_OCCURRENCE)).unlock();
      assert.deepEqual(await provider.retryOccurrence(jobConfig(name), OCCURRENCE, 3, 0), {
        refused: 'settled',
        state: '',
      });
      if (!hasOperatorProvider(other)) return;
      const paused = await failedOnce(provider);
      await other.operatorProvider().pause(paused, { actor: 'kit', reason: 'a check' });
      assert.deepEqual(await other.retryOccurrence(jobConfig(paused), OCCURRENCE, 3, 0), { refused: 'paused' });
    },
  },
  {
    name: 'shares the attempt count with re-runs: a crashed retry is re-run, and a failed re-run retried',
    async run({ provider, other, clock }) {
      if (!canRecoverOccurrences(provider) || !canRecoverOccurrences(other)) return;
      const name = await failedOnce(provider);
      const takenAt = clock.now();
      claimed(await other.retryOccurrence(jobConfig(name, DYING_RUN), OCCURRENCE, 4, 0)); // its node "dies"
      await lockGone(clock, provider, name, takenAt, DYING_RUN);
      const rerun = await provider.recoverOccurrence(jobConfig(name), OCCURRENCE, 4, 0);
      assert.ok('lock' in rerun && rerun.attempt === 3, `attempt 3 re-runs the crashed retry: ${'lock' in rerun}`);
      await finish(rerun.lock, 'failed');
      const retry = await other.retryOccurrence(jobConfig(name), OCCURRENCE, 4, 0);
      assert.ok('lock' in retry && retry.attempt === 4, 'attempt 4 retries the failed re-run');
      await finish(retry.lock, 'failed');
      const spent = await provider.retryOccurrence(jobConfig(name), OCCURRENCE, 4, 0);
      assert.deepEqual(spent, { refused: 'settled', state: 'failed' });
    },
  },
];
