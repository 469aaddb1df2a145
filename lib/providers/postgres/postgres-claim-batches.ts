import type { CallBatch } from '../../core/provider/call-batch.js';
import type { JobRunState } from '../../core/provider/lock-provider.js';
import type { AbandonedLocks } from './postgres-abandoned-locks.js';
import { statementBatch } from './postgres-batches.js';
import type { PostgresSession } from './postgres-session.js';
import type { ClaimRefusalCode } from '../claim-refusals.js';
import type { PostgresStatements } from './postgres-statements.js';

/** A job lock's row: its `fencing_token` when taken, else why it was refused. */
export interface JobLockRow {
  readonly name: string;
  readonly fencing_token: string | null;
  readonly refusal: ClaimRefusalCode<'locked' | 'paused'> | null;
}
/** An occurrence claim's row: its `fencing_token` when taken, else why, and the job record as it stands. */
export interface ClaimRow {
  readonly name: string;
  readonly fencing_token: string | null;
  readonly refusal: ClaimRefusalCode | null;
  readonly occurrence: string | null;
  readonly run_state: JobRunState | null;
}
/** A lock to take: its name, the new owner value and its TTL (ms). */
export interface NewHolder {
  readonly name: string;
  readonly owner: string;
  readonly ttl: number;
}

/** A lock a statement the node gave up on may have taken: released as soon as the store answers (never used). */
export const unusedLock = ({ name, owner }: { name: string; owner: string }) => ({ name, owner, atLeast: 0 });

/** The batches of a burst's occurrence claims and job locks, each one statement, taken for node `node`. */
export function claimBatches(
  session: PostgresSession,
  statements: PostgresStatements,
  abandoned: AbandonedLocks,
  node: string,
): {
  claims: CallBatch<NewHolder & { occurrence: number }, ClaimRow | undefined>;
  jobLocks: CallBatch<NewHolder & { manual: boolean }, JobLockRow | undefined>;
} {
  const holders = (requests: readonly NewHolder[]) => [
    requests.map((request) => request.name),
    requests.map((request) => request.owner),
    requests.map(() => node),
    requests.map((request) => request.ttl),
  ];
  const unused = (requests: readonly NewHolder[], backend: number) => abandoned.add(backend, requests.map(unusedLock));
  return {
    claims: statementBatch<NewHolder & { occurrence: number }, ClaimRow>(
      session,
      statements.claimOccurrences,
      (requests) => [...holders(requests), requests.map((request) => request.occurrence)],
      unused,
    ),
    jobLocks: statementBatch<NewHolder & { manual: boolean }, JobLockRow>(
      session,
      statements.lockJobs,
      (requests) => [...holders(requests), requests.map((request) => request.manual)],
      unused,
    ),
  };
}
