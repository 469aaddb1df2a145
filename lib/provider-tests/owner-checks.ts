import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { OwnerAddressedLockProvider } from '../core/provider/provider-abilities.js';
import { hasOperatorProvider } from '../operators/operator-abilities.js';
import { HELD_FOR_THE_TEST, isLocked, lockConfig, uniqueLockName } from './lock-probes.js';
import { TRICKY_NODE_NAMES } from './node-names.js';
import type { CheckDefinition, CheckNodes } from './provider-subject.js';
import { sleepUntil } from './timing.js';

type Check = CheckDefinition<OwnerAddressedLockProvider>;

/** Takes a fresh name for `owner` on `provider`, failing clearly when it is refused. */
async function lockFor(provider: OwnerAddressedLockProvider, owner: string, ttl = HELD_FOR_THE_TEST) {
  const name = uniqueLockName('owned');
  const lock = await provider.lock(lockConfig(name, ttl), { owner });
  assert.ok(lock, `lock "${name}" for owner ${JSON.stringify(owner)} was refused on a fresh name`);
  return { name, lock };
}

/** A lock of `nodes.provider` for a fresh owner, left to expire. */
async function expiredOwned({ provider, shortLock, clock }: CheckNodes<OwnerAddressedLockProvider>) {
  const owner = randomUUID();
  const { name } = await lockFor(provider, owner, shortLock);
  // Nothing announces an expiry; the claim is about time, so wait it out. The reply bounds the expiry.
  await sleepUntil(clock, clock.now() + 2 * shortLock);
  return { name, owner };
}

/**
 * Owner-addressed locks: `lock(configuration, { owner })`, then `renewByOwner` and `releaseByOwner` from any node,
 * each a compare-and-set that says what it found instead of throwing.
 */
export const ownerChecks: Check[] = [
  {
    name: 'renews and releases by name and owner from another node, with no lock object',
    async run({ provider, other, shortLock, clock }) {
      let owner: string, name: string, requestedAt: number, renewal: string;
      // A renewal whose reply came once the lock could have expired proves nothing: a fresh name is tried again.
      for (let tries = 1; ; tries += 1) {
        owner = randomUUID();
        requestedAt = clock.now();
        ({ name } = await lockFor(provider, owner, shortLock));
        renewal = await other.renewByOwner(name, owner, HELD_FOR_THE_TEST);
        if (renewal !== 'expired' || clock.now() < requestedAt + shortLock || tries === 10) break;
      }
      assert.equal(renewal, 'renewed');
      await sleepUntil(clock, requestedAt + 2 * shortLock);
      assert.equal(await isLocked(other, name), true, 'the renewal by owner did not keep the lock past its first TTL');
      assert.equal(await other.releaseByOwner(name, owner), 'released');
      assert.equal(await isLocked(provider, name), false, 'the release by owner left the lock held');
    },
  },
  {
    name: "refuses another owner's renewal and release (not-owner), changing nothing",
    async run({ provider, other }) {
      const owner = randomUUID();
      const { name } = await lockFor(provider, owner);
      assert.equal(await other.renewByOwner(name, `${owner}x`, 1), 'not-owner');
      assert.equal(await other.releaseByOwner(name, owner.slice(1)), 'not-owner');
      assert.equal(await other.releaseByOwner(name, `:${owner}`), 'not-owner');
      assert.equal(await isLocked(other, name), true, "another owner's call freed or shortened the lock");
      assert.equal(await provider.releaseByOwner(name, owner), 'released');
    },
  },
  {
    name: 'answers expired for a lock that expired or was released, and does not revive it',
    async run(nodes) {
      const { name, owner } = await expiredOwned(nodes);
      assert.equal(await nodes.other.renewByOwner(name, owner, HELD_FOR_THE_TEST), 'expired');
      assert.equal(await nodes.other.releaseByOwner(name, owner), 'expired');
      assert.equal(await isLocked(nodes.other, name), false, 'a renewal of an expired lock took it again');
      const { name: released } = await lockFor(nodes.provider, owner);
      assert.equal(await nodes.provider.releaseByOwner(released, owner), 'released');
      assert.equal(await nodes.other.releaseByOwner(released, owner), 'expired');
      assert.equal(await nodes.other.releaseByOwner(uniqueLockName('never'), owner), 'expired');
    },
  },
  {
    name: 'refuses a second lock() by the same owner while the lock is held (a lock is taken once)',
    async run({ provider, other }) {
      const owner = randomUUID();
      const { name } = await lockFor(provider, owner);
      assert.equal(await other.lock(lockConfig(name), { owner }), undefined);
      assert.equal(await provider.lock(lockConfig(name), { owner }), undefined);
    },
  },
  {
    name: "keeps owners that look like the store's markers and owner values apart, and operators see them",
    async run({ provider, other }) {
      const owners = TRICKY_NODE_NAMES.filter((owner) => owner !== '');
      for (const [i, owner] of owners.entries()) {
        const { name } = await lockFor(provider, owner);
        const stranger = owners[(i + 1) % owners.length];
        assert.equal(await other.releaseByOwner(name, stranger), 'not-owner', `${JSON.stringify(stranger)} released`);
        if (hasOperatorProvider(provider)) {
          const { holder } = await provider.operatorProvider().lockState(name);
          assert.equal(holder?.node, owner, 'operators do not see the caller-chosen owner as the holder');
        }
        assert.equal(await other.releaseByOwner(name, owner), 'released', `${JSON.stringify(owner)} not released`);
      }
    },
  },
  {
    name: 'rejects an empty owner with an error naming it, before reaching the store',
    async run({ provider }) {
      const name = uniqueLockName();
      await assert.rejects(async () => provider.lock(lockConfig(name), { owner: '' }), /owner.*""/);
      await assert.rejects(async () => provider.renewByOwner(name, '', 1), /owner.*""/);
      assert.equal(await isLocked(provider, name), false, 'a lock() with an empty owner took the lock');
    },
  },
];
