import { setImmediate as nextTurn } from 'node:timers/promises';
import type { LockProvider } from '../core/provider/lock-provider.js';
import { lockConfig } from './lock-probes.js';
import type { LockProviderSubject } from './provider-subject.js';
import { REAL_CLOCK } from './timing.js';

/** The shape of ShedLock's `FuzzTester`: workers alternate between two names; worker 0 does few iterations. */
export interface FuzzPlan {
  readonly workers: number;
  readonly iterations: number;
  readonly shortIterations: number;
}

export const SHEDLOCK_FUZZ_PLAN: FuzzPlan = { workers: 8, iterations: 100, shortIterations: 10 };

/** Per lock name: what the unlocked counter reached, what it should be, and the tokens in order of entry. */
export interface FuzzOutcome {
  readonly counted: Record<string, number>;
  readonly expected: Record<string, number>;
  readonly tokensInEntryOrder: Record<string, (number | undefined)[]>;
}

/**
 * ShedLock's `FuzzTester`: each worker, on its own provider (`connect()`), repeatedly takes its lock
 * (retrying while it is held), does a racy read → sleep 1 ms → write of a plain counter, and unlocks.
 * Any two workers inside the same lock at once lose an update, so the counts come out short. The workers sleep on
 * `clock` (see {@link LockProviderSubject.clock}; default the real one).
 */
export async function fuzzLockProvider(
  connect: () => LockProvider | Promise<LockProvider>,
  names: readonly [string, string],
  plan: FuzzPlan = SHEDLOCK_FUZZ_PLAN,
  clock: LockProviderSubject['clock'] = REAL_CLOCK,
): Promise<FuzzOutcome> {
  const perName = <T>(value: () => T): Record<string, T> => Object.fromEntries(names.map((name) => [name, value()]));
  const counted = perName(() => 0);
  const expected = perName(() => 0);
  const tokensInEntryOrder = perName((): (number | undefined)[] => []);
  const workers = Array.from({ length: plan.workers }, (_, index) => ({
    name: names[index % 2],
    iterations: index === 0 ? plan.shortIterations : plan.iterations,
  }));
  for (const { name, iterations } of workers) expected[name] += iterations;

  const providers = await Promise.all(workers.map(() => connect()));
  await Promise.all(
    workers.map(async ({ name, iterations }, index) => {
      const provider = providers[index];
      for (let done = 0; done < iterations;) {
        const lock = await provider.lock(lockConfig(name));
        if (!lock) {
          // Yield a full turn: an in-memory provider answers in a microtask and would starve the holder's timer.
          await nextTurn();
          continue;
        }
        try {
          tokensInEntryOrder[name].push(lock.fencingToken);
          const seen = counted[name];
          await clock.sleep(1);
          counted[name] = seen + 1;
          done += 1;
        } finally {
          await lock.unlock();
        }
      }
    }),
  );
  return { counted, expected, tokensInEntryOrder };
}
