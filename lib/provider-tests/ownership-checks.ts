import { strict as assert } from 'node:assert';
import { inspect } from 'node:util';
import { LockNotHeldError, type LockProvider, type SimpleLock } from '../core/provider/lock-provider.js';
import { fuzzLockProvider, SHEDLOCK_FUZZ_PLAN } from './fuzz.js';
import {
  assertStrictlyIncreasing,
  HELD_FOR_THE_TEST,
  isLocked,
  lockConfig,
  lockWhenFree,
  mustLock,
  uniqueLockName,
} from './lock-probes.js';
import type { CheckDefinition, CheckNodes } from './provider-subject.js';
import { sleepUntil } from './timing.js';

type Check = CheckDefinition<LockProvider>;

/** Takes a fresh name for `shortLock` and resolves to the lock once it has expired. */
async function expiredLock({ provider, shortLock, clock }: CheckNodes): Promise<{ name: string; lock: SimpleLock }> {
  const name = uniqueLockName();
  const lock = await mustLock(provider, lockConfig(name, shortLock));
  // Nothing announces an expiry; the claim is about time, so wait it out. The reply bounds the expiry.
  await sleepUntil(clock, clock.now() + 2 * shortLock);
  return { name, lock };
}

/** A lock left to expire (`expired`, whose owner is now stale) and the lock `other` took after it (`current`). */
async function expiredOwnerAndNewOwner(nodes: CheckNodes) {
  const name = uniqueLockName();
  const expired = await mustLock(nodes.provider, lockConfig(name, nodes.shortLock));
  const expiredBy = nodes.clock.now() + nodes.shortLock;
  const { value: current } = await lockWhenFree(
    nodes.clock,
    nodes.other,
    lockConfig(name),
    expiredBy + nodes.shortLock,
  );
  return { name, expired, current };
}

/** How `attempt` settled: the error it rejected with, or `{ resolvedWith }`. */
function failureOf(attempt: Promise<unknown>): Promise<unknown> {
  return attempt.then(
    (value) => ({ resolvedWith: value }),
    (error: unknown) => error,
  );
}

/** Fails unless `attempt` rejects by the single-use rule, not by a store check (which means it reached the store). */
async function assertSpent(attempt: Promise<unknown>, name: string, call: string): Promise<void> {
  const failure = await failureOf(attempt);
  assert.ok(failure instanceof Error, `${call} of a spent lock object did not reject: ${inspect(failure)}`);
  assert.ok(!(failure instanceof LockNotHeldError), `${call} of a spent lock object went to the store`);
  assert.ok(failure.message.includes(name), `the error of ${call} does not name the lock: ${failure.message}`);
}

/**
 * Who may release and extend: an expired owner may not touch its successor's lock; a stale `unlock()`
 * rejects with `LockNotHeldError`; and ShedLock's fuzz test. With the subject's `singleUseLocks` and
 * `fencingTokens`, those claims too.
 */
export function ownershipChecks(fencingTokens: boolean, singleUseLocks: boolean): Check[] {
  const checks: Check[] = [
    {
      name: 'does not extend a lock that has expired',
      async run(nodes) {
        const { name, lock } = await expiredLock(nodes);
        assert.equal(await lock.extend(HELD_FOR_THE_TEST, 0), undefined, 'an expired lock was extended');
        assert.equal(await isLocked(nodes.other, name), false, 'the extension of an expired lock took it again');
      },
    },
    {
      name: 'rejects the unlock of a lock that has expired with LockNotHeldError (expired)',
      async run(nodes) {
        const { lock } = await expiredLock(nodes);
        const failure = await failureOf(lock.unlock());
        assert.ok(failure instanceof LockNotHeldError, `unlock() of an expired lock gave ${inspect(failure)}`);
        assert.equal(failure.reason, 'expired');
      },
    },
    {
      name: "does not let an expired owner unlock the new owner's lock (LockNotHeldError, not-owner)",
      async run(nodes) {
        const { name, expired, current } = await expiredOwnerAndNewOwner(nodes);
        const failure = await failureOf(expired.unlock());
        assert.ok(failure instanceof LockNotHeldError, `a stale unlock() gave ${inspect(failure)}`);
        assert.equal(failure.reason, 'not-owner');
        assert.equal(failure.lockName, name);
        assert.equal(await isLocked(nodes.provider, name), true, "a stale unlock() freed the new owner's lock");
        await current.unlock();
      },
    },
    {
      name: "does not let an expired owner extend the new owner's lock",
      async run(nodes) {
        const { name, expired, current } = await expiredOwnerAndNewOwner(nodes);
        assert.equal(await expired.extend(HELD_FOR_THE_TEST, 0), undefined, "a stale owner extended another's lock");
        assert.equal(await isLocked(nodes.provider, name), true);
        await current.unlock();
      },
    },
    {
      name: 'never lets two workers into one lock at once (ShedLock fuzz test: 8 workers, own nodes, exact counts)',
      async run({ connect, clock }) {
        const names = [uniqueLockName('fuzz-a'), uniqueLockName('fuzz-b')] as const;
        const outcome = await fuzzLockProvider(connect, names, SHEDLOCK_FUZZ_PLAN, clock);
        assert.deepEqual(outcome.counted, outcome.expected, 'workers inside one lock at once lost updates');
        if (!fencingTokens) return;
        for (const tokens of Object.values(outcome.tokensInEntryOrder)) assertStrictlyIncreasing(tokens);
      },
    },
  ];
  if (singleUseLocks) checks.push(...singleUseChecks);
  if (fencingTokens) checks.push(fencingCheck);
  return checks;
}

const singleUseChecks: Check[] = [
  {
    name: 'refuses to extend or unlock a lock object that was already unlocked',
    async run({ provider, other }) {
      const name = uniqueLockName();
      const lock = await mustLock(provider, lockConfig(name));
      await lock.unlock();
      await assertSpent(lock.extend(HELD_FOR_THE_TEST, 0), name, 'extend()');
      await assertSpent(lock.unlock(), name, 'unlock()');
      assert.equal(await isLocked(other, name), false);
    },
  },
  {
    name: 'makes the old lock object unusable once it was extended, without touching the lock',
    async run({ provider, other }) {
      const name = uniqueLockName();
      const lock = await mustLock(provider, lockConfig(name));
      const extended = await lock.extend(HELD_FOR_THE_TEST, 0);
      assert.ok(extended, 'extend() of a held lock resolved to no lock');
      await assertSpent(lock.unlock(), name, 'unlock()');
      await assertSpent(lock.extend(HELD_FOR_THE_TEST, 0), name, 'extend()');
      assert.equal(await isLocked(other, name), true, 'a spent lock object released the lock');
      await extended.unlock();
    },
  },
];

const fencingCheck: Check = {
  name: 'gives each acquisition of a name a greater fencing token, across nodes and across expiry',
  async run({ provider, other, shortLock, clock }) {
    const name = uniqueLockName();
    const tokens: (number | undefined)[] = [];
    for (const node of [provider, other, provider]) {
      const lock = await mustLock(node, lockConfig(name));
      tokens.push(lock.fencingToken);
      await lock.unlock();
    }
    const expiring = await mustLock(provider, lockConfig(name, shortLock));
    const expiredBy = clock.now() + shortLock;
    tokens.push(expiring.fencingToken);
    const { value: afterExpiry } = await lockWhenFree(clock, other, lockConfig(name), expiredBy + shortLock);
    tokens.push(afterExpiry.fencingToken);
    await afterExpiry.unlock();
    assertStrictlyIncreasing(tokens);
  },
};
