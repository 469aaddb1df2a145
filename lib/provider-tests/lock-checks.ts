import { strict as assert } from 'node:assert';
import type { LockProvider } from '../core/provider/lock-provider.js';
import { HELD_FOR_THE_TEST, isLocked, lockConfig, lockWhenFree, mustLock, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';
import { sleepUntil } from './timing.js';

type Check = CheckDefinition<LockProvider>;

/**
 * Taking, releasing, expiring and extending a lock: ShedLock's `AbstractLockProviderIntegrationTest` and
 * `AbstractExtensibleLockProviderIntegrationTest`. `fencingTokens`: also check that an extension keeps
 * the lock's token.
 */
export function lockChecks(fencingTokens: boolean): Check[] {
  const keepsToken = fencingTokens ? ', keeps its fencing token' : '';
  return [
    {
      name: 'creates a lock and releases it immediately, after which the name can be locked again',
      async run({ provider, other }) {
        const name = uniqueLockName();
        const lock = await mustLock(provider, lockConfig(name));
        assert.equal(await isLocked(other, name), true, 'another node could take a held lock');
        await lock.unlock();
        const again = await mustLock(provider, lockConfig(name));
        await again.unlock();
      },
    },
    {
      name: 'does not hand out a second lock of a held name, to this node or another',
      async run({ provider, other }) {
        const name = uniqueLockName();
        const lock = await mustLock(provider, lockConfig(name));
        assert.equal(await provider.lock(lockConfig(name)), undefined, 'the holding node took its lock again');
        assert.equal(await other.lock(lockConfig(name)), undefined, 'another node took a held lock');
        await lock.unlock();
      },
    },
    {
      name: 'holds two locks of different names at once',
      async run({ provider, other }) {
        const [first, second] = [uniqueLockName(), uniqueLockName()];
        const firstLock = await mustLock(provider, lockConfig(first));
        const secondLock = await mustLock(other, lockConfig(second));
        assert.equal(await isLocked(provider, first), true, 'the first lock is free');
        assert.equal(await isLocked(provider, second), true, 'the second lock is free');
        await firstLock.unlock();
        assert.equal(await isLocked(provider, first), false, 'the first lock is held after its unlock');
        assert.equal(await isLocked(provider, second), true, "the first lock's unlock freed the second");
        await secondLock.unlock();
      },
    },
    {
      name: 'locks twice in a row (lock, unlock, lock, unlock), from either node',
      async run({ provider, other }) {
        const name = uniqueLockName();
        for (const node of [provider, other]) {
          const lock = await mustLock(node, lockConfig(name));
          assert.equal(await lock.unlock(), undefined);
        }
      },
    },
    {
      name: 'lets a lock expire after lockAtMostFor (a short lock is gone after twice its time), and not before',
      async run({ provider, other, shortLock, clockTolerance, clock }) {
        const name = uniqueLockName();
        const requestedAt = clock.now();
        await mustLock(provider, lockConfig(name, shortLock));
        // The store set the expiry before it replied, so the reply bounds it from above.
        const expiredBy = clock.now() + shortLock;
        const { value: next, at } = await lockWhenFree(clock, other, lockConfig(name), expiredBy + shortLock);
        assert.ok(
          at - requestedAt >= shortLock - clockTolerance,
          `free after ${at - requestedAt} ms, not ${shortLock}`,
        );
        await next.unlock();
      },
    },
    {
      name: 'can be locked again right after each unlock, 10 times',
      async run({ provider, other }) {
        const name = uniqueLockName();
        for (let round = 0; round < 10; round += 1) {
          const lock = await mustLock(round % 2 ? other : provider, lockConfig(name));
          await lock.unlock();
        }
      },
    },
    {
      name: 'keeps a released lock until lockAtLeastFor since it was taken, and frees it then',
      async run({ provider, other, clockTolerance, clock }) {
        const name = uniqueLockName();
        const lockAtLeastFor = 2_000;
        const requestedAt = clock.now();
        const lock = await mustLock(provider, lockConfig(name, HELD_FOR_THE_TEST, lockAtLeastFor));
        const freedBy = clock.now() + lockAtLeastFor;
        await lock.unlock();
        assert.equal(await other.lock(lockConfig(name)), undefined, 'the unlock freed the lock before lockAtLeastFor');
        const { value: next, at } = await lockWhenFree(clock, other, lockConfig(name), freedBy + 100);
        assert.ok(at - requestedAt >= lockAtLeastFor - clockTolerance, `free after ${at - requestedAt} ms`);
        await next.unlock();
      },
    },
    {
      name: `extends a lock once: it is held past its first expiry${keepsToken}, and unlocks`,
      async run({ provider, other, shortLock, clock }) {
        const name = uniqueLockName();
        const lock = await mustLock(provider, lockConfig(name, 4 * shortLock));
        const firstExpiryBy = clock.now() + 4 * shortLock;
        const extended = await lock.extend(HELD_FOR_THE_TEST, 0);
        assert.ok(extended, 'extend() of a held lock resolved to no lock');
        if (fencingTokens) assert.equal(extended.fencingToken, lock.fencingToken, 'the extension changed the token');
        await sleepUntil(clock, firstExpiryBy + shortLock);
        assert.equal(await isLocked(other, name), true, 'the lock expired at its first expiry despite the extension');
        await extended.unlock();
        assert.equal(await isLocked(other, name), false, 'the extended lock is held after its unlock');
      },
    },
    {
      name: 'extends a lock several times, each extension keeping it held past the expiry it replaced',
      async run({ provider, other, shortLock, clock }) {
        const name = uniqueLockName();
        const step = 4 * shortLock;
        // Each expiry is bracketed: after the request was sent plus the TTL, before the reply came plus the TTL.
        // A round that a stalled process cannot judge (a reply past the bracket) starts over; it is no failure.
        let sentAt = clock.now();
        let current = await mustLock(provider, lockConfig(name, step));
        let expiry = { after: sentAt + step, before: clock.now() + step };
        let judged = 0;
        for (let tries = 1; judged < 3; tries += 1) {
          assert.ok(tries <= 12, `${judged} of 3 extensions judged in ${tries - 1} rounds: the process kept stalling`);
          // Extend with half the step left, then look once the expiry it replaced has passed.
          await sleepUntil(clock, expiry.after - step / 2);
          const replaced = expiry;
          sentAt = clock.now();
          const next = await current.extend(step, 0);
          expiry = { after: sentAt + step, before: clock.now() + step };
          if (!next) {
            assert.ok(clock.now() >= replaced.after, `extension ${judged + 1} of a held lock resolved to no lock`);
            sentAt = clock.now();
            current = await mustLock(provider, lockConfig(name, step));
            expiry = { after: sentAt + step, before: clock.now() + step };
            continue;
          }
          current = next;
          await sleepUntil(clock, replaced.before + step / 10);
          const held = await isLocked(other, name);
          if (held) judged += 1;
          else assert.ok(clock.now() >= expiry.after, `the lock expired after extension ${judged + 1}`);
        }
        await current.unlock();
      },
    },
    {
      name: 'keeps an extended lock until the lockAtLeastFor given to extend, counted from the extension',
      async run({ provider, other, shortLock, clockTolerance, clock }) {
        const name = uniqueLockName();
        const lockAtLeastFor = 6 * shortLock;
        const lock = await mustLock(provider, lockConfig(name, HELD_FOR_THE_TEST, 0));
        // A gap, so "from the extension" and "from the acquisition" give different answers.
        await sleepUntil(clock, clock.now() + 2 * shortLock);
        const extendedAt = clock.now();
        const extended = await lock.extend(HELD_FOR_THE_TEST, lockAtLeastFor);
        assert.ok(extended, 'extend() of a held lock resolved to no lock');
        const freedBy = clock.now() + lockAtLeastFor;
        await extended.unlock();
        assert.equal(await other.lock(lockConfig(name)), undefined, 'the unlock ignored the lockAtLeastFor of extend');
        const { value: next, at } = await lockWhenFree(clock, other, lockConfig(name), freedBy + 100);
        assert.ok(at - extendedAt >= lockAtLeastFor - clockTolerance, `free ${at - extendedAt} ms after extending`);
        await next.unlock();
      },
    },
  ];
}
