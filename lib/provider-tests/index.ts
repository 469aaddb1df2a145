/**
 * `nest-scheduler-lock/provider-tests`: the conformance kit of the LockProvider contract, for anyone who writes
 * a store. Framework-neutral (node:assert, no test runner's globals) and never loaded by the main entry.
 *
 * @module nest-scheduler-lock/provider-tests
 */

export { describeLockProvider, lockProviderChecks, type TestRunner } from './provider-checks.js';
export type { CheckDefinition, CheckNodes, LockProviderSubject, ProviderCheck } from './provider-subject.js';
export { fuzzLockProvider, SHEDLOCK_FUZZ_PLAN, type FuzzOutcome, type FuzzPlan } from './fuzz.js';
export {
  assertStrictlyIncreasing,
  HELD_FOR_THE_TEST,
  isLocked,
  lockConfig,
  lockWhenFree,
  mustLock,
  uniqueLockName,
} from './lock-probes.js';
export { pollUntil, sleepUntil, type Polled } from './timing.js';
