import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import type { OwnerAddressedLockProvider } from '../core/provider/provider-abilities.js';
import { SchedulerLockStore, type LockAcquireResult } from '../locks-store/scheduler-lock-store.js';
import { assertStrictlyIncreasing, HELD_FOR_THE_TEST, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition, CheckNodes } from './provider-subject.js';
import { sleepUntil } from './timing.js';

type Check = CheckDefinition<OwnerAddressedLockProvider>;

/** 30 days in ms: past a 32-bit integer, as `@nestjs/locks` says its durations may be. */
const THIRTY_DAYS = 2_592_000_000;
/** How many callers race for one key. */
const RACERS = 16;

/** Two stores on two nodes of the store under test, as two instances of an app see it. */
function stores({ provider, other }: CheckNodes<OwnerAddressedLockProvider>) {
  return [new SchedulerLockStore(provider), new SchedulerLockStore(other)] as const;
}

/** The token of an `acquire()` that must succeed. */
function tokenOf(result: LockAcquireResult, what: string): number {
  assert.ok(result.acquired, `${what} was refused`);
  assert.ok(Number.isSafeInteger(result.fencingToken) && result.fencingToken > 0, `${what}: bad fencing token`);
  return result.fencingToken;
}

/**
 * The `LockStore` contract of `@nestjs/locks` 0.0.1, as its interface documents it, on this store through
 * `SchedulerLockStore`: one winner among concurrent callers, compare-and-set renewals and releases from another
 * instance, tokens that grow across releases and expiries, exact Unicode and 500-character keys, 30-day TTLs.
 */
export const lockStoreChecks: Check[] = [
  {
    name: 'lets exactly one of 16 concurrent callers on two instances acquire a free key',
    async run(nodes) {
      const [a, b] = stores(nodes);
      const key = uniqueLockName('race');
      const racing = Array.from({ length: RACERS }, (_, i) => (i % 2 ? a : b).acquire(key, randomUUID(), 60_000));
      const winners = (await Promise.all(racing)).filter((result) => result.acquired);
      assert.equal(winners.length, 1, `${winners.length} of ${RACERS} concurrent callers acquired the key`);
    },
  },
  {
    name: "renews and releases by owner from another instance, and refuses another owner's calls",
    async run(nodes) {
      const [a, b] = stores(nodes);
      const [key, owner] = [uniqueLockName('store'), randomUUID()];
      tokenOf(await a.acquire(key, owner, HELD_FOR_THE_TEST), 'acquire()');
      assert.equal((await b.acquire(key, owner, HELD_FOR_THE_TEST)).acquired, false, 'the holder acquired it twice');
      assert.equal(await b.renew(key, randomUUID(), HELD_FOR_THE_TEST), false, "another owner's renew() succeeded");
      assert.equal(await b.release(key, randomUUID()), false, "another owner's release() succeeded");
      assert.equal(await b.renew(key, owner, HELD_FOR_THE_TEST), true, 'renew() from another instance failed');
      assert.equal(await b.release(key, owner), true, 'release() from another instance failed');
      assert.equal(await a.release(key, owner), false, 'a second release() succeeded');
      tokenOf(await a.acquire(key, randomUUID(), HELD_FOR_THE_TEST), 'acquire() after the release');
    },
  },
  {
    name: 'draws tokens that grow across releases and expiries of a key',
    async run(nodes) {
      const [a, b] = stores(nodes);
      const key = uniqueLockName('tokens');
      const tokens: number[] = [];
      for (const store of [a, b, a]) {
        const owner = randomUUID();
        tokens.push(tokenOf(await store.acquire(key, owner, HELD_FOR_THE_TEST), 'acquire()'));
        assert.equal(await store.release(key, owner), true);
      }
      const expiring = randomUUID();
      tokens.push(tokenOf(await b.acquire(key, expiring, nodes.shortLock), 'acquire() of a short lock'));
      await sleepUntil(nodes.clock, nodes.clock.now() + 2 * nodes.shortLock);
      assert.equal(await b.renew(key, expiring, HELD_FOR_THE_TEST), false, 'renew() revived an expired lock');
      tokens.push(tokenOf(await a.acquire(key, randomUUID(), HELD_FOR_THE_TEST), 'acquire() after an expiry'));
      assertStrictlyIncreasing(tokens);
    },
  },
  {
    name: 'keeps Unicode and 500-character keys exactly apart',
    async run(nodes) {
      const [a, b] = stores(nodes);
      const base = uniqueLockName('ключ-🔒');
      const long = `${base}-${'é'.repeat(500 - base.length - 1)}`;
      const keys = [base, base.toUpperCase(), `${base}\u0301`, `${base}{x}`, long, `${long.slice(0, -1)}e`];
      assert.equal(new Set(keys).size, keys.length);
      const owners = keys.map(() => randomUUID());
      for (const [i, key] of keys.entries()) tokenOf(await a.acquire(key, owners[i], HELD_FOR_THE_TEST), key);
      for (const [i, key] of keys.entries()) {
        assert.equal((await b.acquire(key, randomUUID(), HELD_FOR_THE_TEST)).acquired, false, `${key} was free`);
        assert.equal(await b.release(key, owners[(i + 1) % keys.length]), false, `${key}: a stranger released it`);
        assert.equal(await b.release(key, owners[i]), true, `${key} was not released by its owner`);
      }
    },
  },
  {
    name: 'takes and renews a lock for 30 days (past a 32-bit integer of ms)',
    async run(nodes) {
      const [a, b] = stores(nodes);
      const [key, owner] = [uniqueLockName('month'), randomUUID()];
      tokenOf(await a.acquire(key, owner, THIRTY_DAYS), 'a 30-day acquire()');
      assert.equal(await b.renew(key, owner, THIRTY_DAYS), true, 'a 30-day renew() failed');
      assert.equal((await b.acquire(key, randomUUID(), 1)).acquired, false, 'a 30-day lock read as free');
      assert.equal(await b.release(key, owner), true);
    },
  },
];
