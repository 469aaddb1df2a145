import type { JobRecord } from '../../core/provider/lock-provider.js';
import { DEFAULT_HISTORY_LIMIT } from '../../operators/operator-provider.js';
import { runEntry } from '../../operators/stored-records.js';
import { InMemoryLocks, type RunEnd } from './in-memory-locks.js';
import { InMemoryOperatorProvider } from './in-memory-operator-provider.js';

/**
 * A job record as kept in memory: the stored fields of a {@link JobRecord}, plus the run's token and
 * when a recovery first found its lock gone (monotonic ms).
 */
export type StoredRecord = Omit<JobRecord, 'held'> & { token: string; orphanedAt?: number };

/**
 * What the in-memory store holds, apart from any one node: the locks, the job records of once-per-occurrence
 * jobs and the operator store. One {@link InMemoryLockProvider} has its own; several providers given the same
 * one (`store` option) are the nodes of one cluster in one process, each with its own `node`, as Redis is
 * shared by the nodes of a real cluster.
 */
export class InMemoryStore {
  readonly locks: InMemoryLocks;
  readonly records = new Map<string, StoredRecord>();
  readonly operators: InMemoryOperatorProvider;

  constructor(historyLimit = DEFAULT_HISTORY_LIMIT) {
    this.locks = new InMemoryLocks((end) => this.runEnded(end));
    this.operators = new InMemoryOperatorProvider(this.locks, historyLimit);
  }

  /**
   * Forgets every lock, fencing counter, job record, history, pause, trigger and skip count; the nodes and their
   * jobs stay known to the console (see {@link InMemoryOperatorProvider.clearRecords}).
   */
  clear(): void {
    this.locks.clear();
    this.records.clear();
    this.operators.clearRecords();
  }

  /**
   * A run ended (`finish()`): its job record says how, if the record is still that run's, and a scheduled
   * job's run goes into its history (`lost` when its lock was gone), under the node that ran it.
   */
  private runEnded({ lock, outcome, report, held }: RunEnd): void {
    const { name } = lock.configuration;
    const record = this.records.get(name);
    if (record?.token === lock.token) this.records.set(name, { ...record, state: outcome, finishedAt: new Date() });
    if (!lock.ofJob || !report) return;
    const { fencingToken, node } = lock;
    this.operators.record(name, { ...runEntry(report, node, fencingToken), outcome: held ? outcome : 'lost' });
  }
}
