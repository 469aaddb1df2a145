/**
 * `nest-scheduler-lock/provider-tests`: the conformance kit of the LockProvider contract, for anyone who writes
 * a store. Framework-neutral (node:assert, no test runner's globals) and never loaded by the main entry.
 *
 * @module nest-scheduler-lock/provider-tests
 */

export { describeLockProvider, lockProviderChecks, type TestRunner } from './provider-checks.js';
export type { LockProviderSubject, ProviderCheck } from './provider-subject.js';
export { fuzzLockProvider, type FuzzOutcome, type FuzzPlan } from './fuzz.js';
