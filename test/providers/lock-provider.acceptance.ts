import { type LockProvider, type SimpleLock } from '../../lib/index.js';
import { LockNotHeldError } from '../../lib/provider/index.js';
import { setByHooks, type HookValues } from '../support/set-by-hooks.js';
import { sleepUntil } from '../support/timing.js';
import { fuzzLockProvider } from './lock-provider.fuzz.js';
import {
  expectStrictlyIncreasing,
  isLocked,
  lockConfig,
  lockWhenFree,
  mustLock,
  uniqueLockName,
  HELD_FOR_THE_TEST,
} from './lock-probes.js';

/** A store under test, reachable through as many providers ("nodes") as a test needs. */
export interface LockProviderFixture {
  /** A provider of its own onto the fixture's store (for Redis: on its own connection), like another node. */
  connect(): LockProvider | Promise<LockProvider>;
  /** Closes what the fixture opened and deletes what it stored. */
  close(): Promise<void>;
}

/** A fixture's store and two nodes on it, as {@link useLockProviderNodes} gives them: set by its hooks. */
export interface LockProviderNodes {
  readonly fixture: LockProviderFixture;
  /** The node under test. */
  readonly provider: LockProvider;
  /** Another node on the same store. */
  readonly other: LockProvider;
}

/**
 * Registers, in the describe block that calls it, the hooks of tests of a provider: before its first
 * test the fixture `setup` makes and two nodes on it; after its last test `teardown` (for what still
 * uses the nodes), then the fixture closed.
 */
export function useLockProviderNodes(
  setup: () => LockProviderFixture | Promise<LockProviderFixture>,
  teardown?: () => unknown,
): LockProviderNodes {
  const values: HookValues<LockProviderNodes> = {};
  beforeAll(async () => {
    const fixture = await setup();
    values.fixture = fixture;
    values.provider = await fixture.connect();
    values.other = await fixture.connect();
  });
  afterAll(async () => {
    try {
      await teardown?.();
    } finally {
      await values.fixture?.close();
    }
  });
  return setByHooks('useLockProviderNodes()', values, ['fixture', 'provider', 'other']);
}

/**
 * What a provider offers beyond the contract the library relies on; each adds the tests of its claim.
 * Both are on unless a provider says otherwise.
 */
export interface OptionalLockFeatures {
  /** Locks carry a `fencingToken`, strictly increasing per name. */
  readonly fencing: boolean;
  /** A lock object refuses a second `unlock()` / `extend()`, as `AbstractSimpleLock` does. */
  readonly singleUse: boolean;
}

/** A lock short enough to watch expire. */
const SHORT = 50;
/** Redis keeps TTLs in whole milliseconds on its own clock; an expiry may come this much early by ours. */
const CLOCK_TOLERANCE = 5;

/** Takes `name` for {@link SHORT} and resolves to the lock once it has expired. */
async function expiredLock(provider: LockProvider, name: string): Promise<SimpleLock> {
  const requestedAt = performance.now();
  const lock = await mustLock(provider, lockConfig(name, SHORT));
  // Nothing announces an expiry; the claim is about time, so wait it out.
  await sleepUntil(requestedAt + 2 * SHORT);
  return lock;
}

/**
 * The contract every {@link LockProvider} must meet: ShedLock's `AbstractLockProviderIntegrationTest`,
 * `AbstractExtensibleLockProviderIntegrationTest` and `FuzzTester`, plus owner checks; and, for a
 * provider that offers them, fencing tokens and single-use lock objects. `provider` and `other` are two
 * nodes on one store.
 */
export function describeLockProvider(
  label: string,
  setup: () => LockProviderFixture | Promise<LockProviderFixture>,
  features: OptionalLockFeatures = { fencing: true, singleUse: true },
): void {
  describe(`${label} (LockProvider acceptance)`, () => {
    const nodes = useLockProviderNodes(setup);

    /** A lock left to expire (`expired`, whose owner is now stale) and the lock `other` took after it (`current`). */
    async function expiredOwnerAndNewOwner(): Promise<{ name: string; expired: SimpleLock; current: SimpleLock }> {
      const name = uniqueLockName();
      const requestedAt = performance.now();
      const expired = await mustLock(nodes.provider, lockConfig(name, SHORT));
      const { value: current } = await lockWhenFree(nodes.other, lockConfig(name), requestedAt + 2 * SHORT);
      return { name, expired, current };
    }

    it('creates a lock and releases it immediately, after which the name can be locked again', async () => {
      const name = uniqueLockName();
      const lock = await mustLock(nodes.provider, lockConfig(name));
      expect(await isLocked(nodes.other, name)).toBe(true);
      await lock.unlock();
      const again = await nodes.provider.lock(lockConfig(name));
      expect(again).toBeDefined();
      await again!.unlock();
    });

    it('does not hand out a second lock of a held name, to this node or another', async () => {
      const name = uniqueLockName();
      const lock = await mustLock(nodes.provider, lockConfig(name));
      expect(await nodes.provider.lock(lockConfig(name))).toBeUndefined();
      expect(await nodes.other.lock(lockConfig(name))).toBeUndefined();
      await lock.unlock();
    });

    it('holds two locks of different names at once', async () => {
      const [first, second] = [uniqueLockName(), uniqueLockName()];
      const firstLock = await mustLock(nodes.provider, lockConfig(first));
      const secondLock = await mustLock(nodes.other, lockConfig(second));
      expect(await isLocked(nodes.provider, first)).toBe(true);
      expect(await isLocked(nodes.provider, second)).toBe(true);
      await firstLock.unlock();
      expect(await isLocked(nodes.provider, first)).toBe(false);
      expect(await isLocked(nodes.provider, second)).toBe(true);
      await secondLock.unlock();
    });

    it('locks twice in a row (lock, unlock, lock, unlock)', async () => {
      const name = uniqueLockName();
      for (const node of [nodes.provider, nodes.other]) {
        const lock = await mustLock(node, lockConfig(name));
        await expect(lock.unlock()).resolves.toBeUndefined();
      }
    });

    it('lets a lock expire after lockAtMostFor (a 50 ms lock is gone after 100 ms), and not before', async () => {
      const name = uniqueLockName();
      const requestedAt = performance.now();
      await mustLock(nodes.provider, lockConfig(name, SHORT));
      const { value: next, at } = await lockWhenFree(nodes.other, lockConfig(name), requestedAt + 2 * SHORT);
      expect(at - requestedAt).toBeGreaterThanOrEqual(SHORT - CLOCK_TOLERANCE);
      await next.unlock();
    });

    it('can be locked again right after each unlock, 10 times', async () => {
      const name = uniqueLockName();
      for (let round = 0; round < 10; round += 1) {
        const lock = await mustLock(round % 2 ? nodes.other : nodes.provider, lockConfig(name));
        await lock.unlock();
      }
    });

    it('keeps a released lock until lockAtLeastFor since it was taken, and frees it then', async () => {
      const name = uniqueLockName();
      const lockAtLeastFor = 2_000;
      const requestedAt = performance.now();
      const lock = await mustLock(nodes.provider, lockConfig(name, HELD_FOR_THE_TEST, lockAtLeastFor));
      await lock.unlock();
      expect(await nodes.other.lock(lockConfig(name))).toBeUndefined();
      const { value: next, at } = await lockWhenFree(nodes.other, lockConfig(name), requestedAt + lockAtLeastFor + 100);
      expect(at - requestedAt).toBeGreaterThanOrEqual(lockAtLeastFor - CLOCK_TOLERANCE);
      await next.unlock();
    });

    const keepsToken = features.fencing ? ', keeps its fencing token' : '';
    it(`extends a lock once: it is held past its first expiry${keepsToken}, and unlocks`, async () => {
      const name = uniqueLockName();
      const lock = await mustLock(nodes.provider, lockConfig(name, 4 * SHORT));
      const firstExpiryBy = performance.now() + 4 * SHORT;
      const extended = await lock.extend(HELD_FOR_THE_TEST, 0);
      expect(extended).toBeDefined();
      if (features.fencing) expect(extended!.fencingToken).toBe(lock.fencingToken);
      await sleepUntil(firstExpiryBy + SHORT);
      expect(await isLocked(nodes.other, name)).toBe(true);
      await extended!.unlock();
      expect(await isLocked(nodes.other, name)).toBe(false);
    });

    it('extends a lock several times, each extension keeping it held past the expiry it replaced', async () => {
      const name = uniqueLockName();
      const step = 4 * SHORT;
      let current = await mustLock(nodes.provider, lockConfig(name, step));
      let expiresBy = performance.now() + step;
      for (let round = 0; round < 3; round += 1) {
        // Extend with half the step left, then look once the expiry it replaced has passed.
        await sleepUntil(expiresBy - step / 2);
        const replacedExpiry = expiresBy;
        const next = await current.extend(step, 0);
        expect(next).toBeDefined();
        current = next!;
        expiresBy = performance.now() + step;
        await sleepUntil(replacedExpiry + step / 10);
        expect(await isLocked(nodes.other, name)).toBe(true);
      }
      await current.unlock();
    });

    if (features.singleUse) {
      it('refuses to extend or unlock a lock that was already unlocked', async () => {
        const name = uniqueLockName();
        const lock = await mustLock(nodes.provider, lockConfig(name));
        await lock.unlock();
        await expectSpent(lock.extend(HELD_FOR_THE_TEST, 0), name);
        await expectSpent(lock.unlock(), name);
        expect(await isLocked(nodes.other, name)).toBe(false);
      });
    }

    it('does not extend a lock that has expired', async () => {
      const name = uniqueLockName();
      const lock = await expiredLock(nodes.provider, name);
      await expect(lock.extend(HELD_FOR_THE_TEST, 0)).resolves.toBeUndefined();
      expect(await isLocked(nodes.other, name)).toBe(false);
    });

    it('rejects the unlock of a lock that has expired with LockNotHeldError (expired)', async () => {
      const lock = await expiredLock(nodes.provider, uniqueLockName());
      await expect(lock.unlock()).rejects.toEqual(
        expect.objectContaining({ name: 'LockNotHeldError', reason: 'expired' }),
      );
    });

    it('keeps an extended lock until the lockAtLeastFor given to extend, counted from the extension', async () => {
      const name = uniqueLockName();
      const lockAtLeastFor = 6 * SHORT;
      const lock = await mustLock(nodes.provider, lockConfig(name, HELD_FOR_THE_TEST, 0));
      // A gap, so "from the extension" and "from the acquisition" give different answers.
      await sleepUntil(performance.now() + 2 * SHORT);
      const extendedAt = performance.now();
      const extended = await lock.extend(HELD_FOR_THE_TEST, lockAtLeastFor);
      await extended!.unlock();
      expect(await nodes.other.lock(lockConfig(name))).toBeUndefined();
      const { value: next, at } = await lockWhenFree(nodes.other, lockConfig(name), extendedAt + lockAtLeastFor + 100);
      expect(at - extendedAt).toBeGreaterThanOrEqual(lockAtLeastFor - CLOCK_TOLERANCE);
      await next.unlock();
    });

    if (features.singleUse) {
      it('makes the old lock object unusable once it was extended, without touching the lock', async () => {
        const name = uniqueLockName();
        const lock = await mustLock(nodes.provider, lockConfig(name));
        const extended = await lock.extend(HELD_FOR_THE_TEST, 0);
        await expectSpent(lock.unlock(), name);
        await expectSpent(lock.extend(HELD_FOR_THE_TEST, 0), name);
        expect(await isLocked(nodes.other, name)).toBe(true);
        await expect(extended!.unlock()).resolves.toBeUndefined();
      });
    }

    it("does not let an expired owner unlock the new owner's lock", async () => {
      const { name, expired, current } = await expiredOwnerAndNewOwner();
      const failure = await expired.unlock().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(LockNotHeldError);
      expect(failure).toMatchObject({ reason: 'not-owner', lockName: name });
      expect(await isLocked(nodes.provider, name)).toBe(true);
      await expect(current.unlock()).resolves.toBeUndefined();
    });

    it("does not let an expired owner extend the new owner's lock", async () => {
      const { name, expired, current } = await expiredOwnerAndNewOwner();
      await expect(expired.extend(HELD_FOR_THE_TEST, 0)).resolves.toBeUndefined();
      expect(await isLocked(nodes.provider, name)).toBe(true);
      await expect(current.unlock()).resolves.toBeUndefined();
    });

    if (features.fencing) {
      it('gives each acquisition of a name a greater fencing token, across nodes and across expiry', async () => {
        const name = uniqueLockName();
        const tokens: (number | undefined)[] = [];
        for (const node of [nodes.provider, nodes.other, nodes.provider]) {
          const lock = await mustLock(node, lockConfig(name));
          tokens.push(lock.fencingToken);
          await lock.unlock();
        }
        const requestedAt = performance.now();
        const expiring = await mustLock(nodes.provider, lockConfig(name, SHORT));
        tokens.push(expiring.fencingToken);
        const { value: afterExpiry } = await lockWhenFree(nodes.other, lockConfig(name), requestedAt + 2 * SHORT);
        tokens.push(afterExpiry.fencingToken);
        await afterExpiry.unlock();
        expectStrictlyIncreasing(tokens);
      });
    }

    it('never lets two workers into one lock at once (ShedLock fuzz test: 8 workers, own providers, exact counts)', async () => {
      const outcome = await fuzzLockProvider(
        () => nodes.fixture.connect(),
        [uniqueLockName('fuzz-a'), uniqueLockName('fuzz-b')],
      );
      expect(outcome.counted).toEqual(outcome.expected);
      if (!features.fencing) return;
      for (const tokens of Object.values(outcome.tokensInEntryOrder)) expectStrictlyIncreasing(tokens);
    });
  });
}

/** Fails unless `attempt` rejects by the single-use rule (not by a store check, which would mean it reached the store). */
async function expectSpent(attempt: Promise<unknown>, name: string): Promise<void> {
  const failure = await attempt.then(
    (value) => ({ resolvedWith: value }),
    (error: unknown) => error,
  );
  expect(failure).toBeInstanceOf(Error);
  expect(failure).not.toBeInstanceOf(LockNotHeldError);
  expect((failure as Error).message).toContain(name);
}
