import { strict as assert } from 'node:assert';
import type { LeaseRenewingLockProvider, StartupCheckingLockProvider } from '../core/provider/provider-abilities.js';
import { HELD_FOR_THE_TEST, isLocked, lockConfig, lockWhenFree, mustLock, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';
import { sleepUntil } from './timing.js';

/** `renewLeases()`: the leases of `keepAlive` runs, renewed together, each lost one told apart. */
export const renewalChecks: CheckDefinition<LeaseRenewingLockProvider>[] = [
  {
    name: 'renews several leases in one call: each is held past its first expiry, and its lock object stays usable',
    async run({ provider, other, shortLock, clock }) {
      const lease = 4 * shortLock;
      const names = [uniqueLockName('lease'), uniqueLockName('lease'), uniqueLockName('lease')];
      const locks = await Promise.all(names.map((name) => mustLock(provider, lockConfig(name, lease))));
      const firstExpiryBy = clock.now() + lease;
      const outcomes = await provider.renewLeases(locks.map((lock) => ({ lock, ttl: HELD_FOR_THE_TEST })));
      assert.deepEqual(outcomes, ['renewed', 'renewed', 'renewed']);
      await sleepUntil(clock, firstExpiryBy + shortLock);
      for (const name of names) assert.equal(await isLocked(other, name), true, `the lease of ${name} ran out`);
      // Unlike extend(), a renewal leaves the lock objects as they were: they release their locks.
      for (const lock of locks) await lock.unlock();
      for (const name of names) assert.equal(await isLocked(other, name), false, `${name} is held after its unlock`);
    },
  },
  {
    name: 'tells each lost lease apart, in order: renewed, expired, not-owner, and renews none of the lost ones',
    async run({ provider, other, shortLock, clock }) {
      const [kept, expired, taken] = [uniqueLockName('kept'), uniqueLockName('expired'), uniqueLockName('taken')];
      const keptLock = await mustLock(provider, lockConfig(kept));
      const expiredLock = await mustLock(provider, lockConfig(expired, shortLock));
      const takenLock = await mustLock(provider, lockConfig(taken, shortLock));
      // The store set both expiries before its last reply, so the reply bounds them.
      const expiredBy = clock.now() + shortLock;
      const { value: thief } = await lockWhenFree(clock, other, lockConfig(taken), expiredBy + shortLock);
      await sleepUntil(clock, expiredBy + shortLock);

      const outcomes = await provider.renewLeases(
        [keptLock, expiredLock, takenLock].map((lock) => ({ lock, ttl: HELD_FOR_THE_TEST })),
      );

      assert.deepEqual(outcomes, ['renewed', 'expired', 'not-owner']);
      assert.equal(await isLocked(other, expired), false, 'the renewal of an expired lease took it again');
      await thief.unlock();
      assert.equal(await isLocked(other, taken), false, "the renewal of a lost lease kept the new owner's lock");
      await keptLock.unlock();
    },
  },
  {
    name: 'renews nothing for an empty list',
    async run({ provider }) {
      assert.deepEqual(await provider.renewLeases([]), []);
    },
  },
];

/** `checkProvider()`: the startup check passes on a store that accepts the provider as the kit reaches it. */
export const storeChecks: CheckDefinition<StartupCheckingLockProvider>[] = [
  {
    name: 'resolves the startup check on a store that accepts the provider',
    async run({ provider }) {
      assert.equal(await provider.checkProvider(), undefined);
    },
  },
];
