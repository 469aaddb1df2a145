import type { LockProvider } from '../core/provider/lock-provider.js';
import {
  canCheckProvider,
  canAddressOwners,
  canClaimOccurrences,
  canReadJobRecords,
  canRecoverOccurrences,
  canRenewLeases,
  canRetryOccurrences,
  type JobRecordReader,
  type OccurrenceLockProvider,
} from '../core/provider/provider-abilities.js';
import {
  canLockJobs,
  hasOperatorProvider,
  type JobLockProvider,
  type OperatorLockProvider,
} from '../operators/operator-abilities.js';
import { healthReportChecks } from './health-checks.js';
import { identityChecks, operatorIdentityChecks } from './identity-checks.js';
import { jobLockChecks, pauseChecks } from './job-lock-checks.js';
import { leaderChecks } from './leader-checks.js';
import { lockChecks } from './lock-checks.js';
import { moduleChecks } from './module-checks.js';
import { jobRecordChecks, occurrenceChecks } from './occurrence-checks.js';
import { catchUpChecks, occurrenceModuleChecks, rerunChecks } from './occurrence-module-checks.js';
import { lockStateChecks } from './lock-state-checks.js';
import { operatorChecks } from './operator-checks.js';
import { ownershipChecks } from './ownership-checks.js';
import { ownerChecks } from './owner-checks.js';
import { lockStoreChecks } from './lock-store-checks.js';
import type { CheckDefinition, LockProviderSubject, ProviderCheck } from './provider-subject.js';
import { recoveryChecks } from './recovery-checks.js';
import { runOnNodes } from './run-on-nodes.js';
import { retryChecks } from './retry-checks.js';
import { renewalChecks, storeChecks } from './renewal-checks.js';

/** A section of checks, run when the provider has its ability (`has`, one of the module's own ability guards). */
interface Section<P extends LockProvider> {
  readonly name: string;
  readonly has: (provider: LockProvider) => provider is P;
  readonly checks: readonly CheckDefinition<P>[];
}

const section = <P extends LockProvider>(name: string, has: Section<P>['has'], checks: Section<P>['checks']) =>
  ({ name, has, checks }) as Section<LockProvider>;

const everyProvider = (provider: LockProvider): provider is LockProvider => typeof provider.lock === 'function';
const pausesJobs = (provider: LockProvider): provider is JobLockProvider & OperatorLockProvider =>
  canLockJobs(provider) && hasOperatorProvider(provider);
const recordsOccurrences = (provider: LockProvider): provider is OccurrenceLockProvider & JobRecordReader =>
  canClaimOccurrences(provider) && canReadJobRecords(provider);

/**
 * The conformance checks for `subject`: the `lock` section, which every provider must pass (ShedLock's
 * `AbstractLockProviderIntegrationTest`, its fuzz test, the owner checks, node names like the store's markers)
 * and the `module` section (its locks under `SchedulerLockModule`: `@Cron`, `@Interval`, `@Timeout`,
 * `executeWithLock`), then one section per ability the provider has, as the module detects it: `lockOccurrence`,
 * `readJobRecord`, `recoverOccurrence`, `retryOccurrence`, `renewLeases`, `checkProvider`, `renewByOwner`
 * (owner-addressed locks, and `lockStore`: the `@nestjs/locks` store contract on top of them), `lockJob`, and
 * `operatorProvider` (pausing and node names, with `lockJob`). Each check makes its own nodes with
 * `subject.create()`, uses lock names of its own, and closes its nodes with `subject.cleanup()`; checks may run one
 * after the other or at once. Register them with your test runner (or call {@link describeLockProvider}); each one
 * takes up to a few seconds, so give tests 30 s on a remote store.
 */
export function lockProviderChecks<P extends LockProvider>(subject: LockProviderSubject<P>): ProviderCheck[] {
  const { provider } = subject;
  const sample = (typeof provider === 'function' ? provider.prototype : provider) as LockProvider;
  const [fencing, singleUse] = [subject.fencingTokens ?? false, subject.singleUseLocks ?? false];
  const sections = [
    section('lock', everyProvider, [...lockChecks(fencing), ...ownershipChecks(fencing, singleUse), ...identityChecks]),
    section('module', everyProvider, moduleChecks),
    section('lockOccurrence', canClaimOccurrences, [...occurrenceChecks, ...occurrenceModuleChecks]),
    section('readJobRecord', recordsOccurrences, [...jobRecordChecks, ...catchUpChecks]),
    section('recoverOccurrence', canRecoverOccurrences, [...recoveryChecks, ...rerunChecks]),
    section('retryOccurrence', canRetryOccurrences, retryChecks),
    section('renewLeases', canRenewLeases, renewalChecks),
    section('leaderElection', canRenewLeases, leaderChecks),
    section('checkProvider', canCheckProvider, storeChecks),
    section('renewByOwner', canAddressOwners, ownerChecks),
    section('lockStore', canAddressOwners, lockStoreChecks),
    section('lockJob', canLockJobs, jobLockChecks),
    section('operatorProvider', pausesJobs, [
      ...pauseChecks,
      ...operatorIdentityChecks,
      ...operatorChecks,
      ...lockStateChecks,
    ]),
    section('claimHealthReports', hasOperatorProvider, healthReportChecks),
  ];
  return sections
    .filter(({ has }) => has(sample))
    .flatMap(({ name: sectionName, has, checks }) =>
      checks.map((check) => ({
        section: sectionName,
        name: check.name,
        concurrent: check.concurrent ?? false,
        run: () => runOnNodes(subject as LockProviderSubject, has, check),
      })),
    );
}

/**
 * The `describe` and `it` of a test runner: Jest's and Vitest's globals (or imports), or `node:test`'s
 * `describe` and `it`. With `concurrent` (Jest's and Vitest's `it.concurrent`), the checks that wait on an
 * app's schedule run at once.
 */
export interface TestRunner {
  describe(name: string, body: () => void): unknown;
  it(name: string, check: () => Promise<void>): unknown;
  concurrent?(name: string, check: () => Promise<void>): unknown;
}

/**
 * Registers {@link lockProviderChecks} with a test runner: a `describe` block named after the subject,
 * one nested block per section, one test per check. Call it where the runner collects tests (the top of a
 * test file, or inside a `describe`).
 */
export function describeLockProvider<P extends LockProvider>(
  subject: LockProviderSubject<P>,
  { describe, it, concurrent = it }: TestRunner,
): void {
  const checks = lockProviderChecks(subject);
  describe(`${subject.name} (LockProvider conformance)`, () => {
    for (const sectionName of new Set(checks.map((check) => check.section))) {
      describe(sectionName, () => {
        for (const check of checks.filter((each) => each.section === sectionName)) {
          (check.concurrent ? concurrent : it)(check.name, check.run);
        }
      });
    }
  });
}
