import type { PostgresSession } from './postgres-session.js';
import { ms, NOW, statement } from './postgres-statements.js';

/** A lock a statement the node gave up on may have taken (or renewed) under `owner`. */
export interface AbandonedLock {
  readonly name: string;
  readonly owner: string;
  /** `lockAtLeastFor` (ms) still to apply on release: 0 for a lock the node never used. */
  readonly atLeast: number;
}

/** How many abandoned owner values a lock name keeps: the oldest goes first. */
const MAX_PER_NAME = 16;
/** The first and the longest wait before looking again for server backends still running a given-up statement. */
const FIRST_RETRY_MS = 100;
const MAX_RETRY_MS = 5_000;

/**
 * Locks taken by statements the node gave up on, released once the store answers again. A server frozen past
 * the node's answer deadline runs the statement when it thaws and takes the lock under an owner value whose
 * answer goes to a closed socket: unreleased, it would stay held by nobody for `lockAtMostFor`. The node knows
 * the owner values it sent, so it releases them owner-checked (a no-op for one that never took the lock), but
 * only once the server backend that had the statement is gone: until then the statement may still run. A lock
 * whose release failed (given up, cut off, or never sent) is released so too, at once: a late release takes nothing.
 */
export class AbandonedLocks {
  private readonly byName = new Map<string, (AbandonedLock & { readonly backend: number | undefined })[]>();
  private settling = false;
  private retry: NodeJS.Timeout | undefined;
  private retryMs = FIRST_RETRY_MS;
  private readonly statements;

  constructor(
    private readonly session: PostgresSession,
    locks: string,
  ) {
    this.statements = abandonedStatements(locks);
    session.whenAnswered = () => this.settle();
  }

  /**
   * `locks` went in a statement sent on server backend `backend`, whose answer never came; `undefined`: in a
   * release that failed, which may run late but can take nothing.
   */
  add(backend: number | undefined, locks: readonly AbandonedLock[]): void {
    for (const lock of locks) {
      const list = this.byName.get(lock.name) ?? [];
      list.push({ ...lock, backend });
      this.byName.set(lock.name, list.slice(-MAX_PER_NAME));
    }
    this.settleSoon();
  }

  /** The store answers: releases the abandoned locks whose statements can no longer run. */
  settle(): void {
    if (this.settling || this.byName.size === 0) return;
    this.settling = true;
    this.release().then(
      () => {
        this.settling = false;
        // A backend still running a given-up statement: looked at again, later and later.
        this.retryMs = this.byName.size === 0 ? FIRST_RETRY_MS : Math.min(this.retryMs * 2, MAX_RETRY_MS);
        this.settleSoon();
      },
      () => {
        // Still out: the next statement answered tries again, or this later.
        this.settling = false;
        this.retryMs = Math.min(this.retryMs * 2, MAX_RETRY_MS);
        this.settleSoon();
      },
    );
  }

  private async release(): Promise<void> {
    const waiting = [...this.byName.values()].flat();
    const backends = [...new Set(waiting.flatMap((lock) => (lock.backend === undefined ? [] : [lock.backend])))];
    const running = backends.length ? await this.session.run<{ pid: number }>(this.statements.running, [backends]) : [];
    const busy = new Set<number | undefined>(running.map((row) => row.pid));
    const done = waiting.filter((lock) => !busy.has(lock.backend));
    if (done.length === 0) return;
    await this.session.run(this.statements.release, [
      done.map((lock) => lock.name),
      done.map((lock) => lock.owner),
      done.map((lock) => lock.atLeast),
    ]);
    for (const lock of done) {
      const left = this.byName.get(lock.name)?.filter((other) => other !== lock) ?? [];
      if (left.length > 0) this.byName.set(lock.name, left);
      else this.byName.delete(lock.name);
    }
  }

  /** Settles in a moment, unless nothing is left or a settling is already due. */
  private settleSoon(): void {
    if (this.byName.size === 0 || this.retry) return;
    const settle = () => {
      this.retry = undefined;
      this.settle();
    };
    this.retry = setTimeout(settle, this.retryMs).unref();
  }
}

/** The statements of {@link AbandonedLocks} on the locks table `locks`. */
function abandonedStatements(locks: string) {
  return {
    /** Which of the backends `$1` still exist (each ends once its client has gone and its statement is done). */
    running: statement(`SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::integer[])`),
    /** Releases each lock (arrays: name, owner, lockAtLeastFor ms) still held by that owner. */
    release: statement(`
      UPDATE ${locks} l SET lock_until = greatest(l.locked_at + ${ms('a.at_least')}, ${NOW})
      FROM unnest($1::text[], $2::text[], $3::bigint[]) AS a(name, owner, at_least)
      WHERE l.name = a.name AND l.owner = a.owner AND l.lock_until > ${NOW}`),
  };
}
