import { ActiveLock } from '../core/executor/active-lock.js';
import type { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { SchedulerLockLogger } from '../core/executor/logger.js';
import type { LockLostReason } from '../core/provider/errors.js';
import { firstTake, type RunLockConfiguration } from '../core/provider/lock-configuration.js';
import type { LockProvider, SimpleLock } from '../core/provider/lock-provider.js';
import { describeError } from '../core/provider/message-text.js';
import { awaitProviderCall, describeProvider, usableLock } from '../core/provider/provider-checks.js';
import { LeadershipEndedError, type LeaderLease, type LeadershipEndReason } from './leader-lease.js';
import type { OnLeadershipAcquired, OnLeadershipLost } from './leadership-hooks.js';

/** The hooks a campaign calls: those of a `@LeaderElection()` provider, each one optional. */
export type LeadershipHooks = Partial<OnLeadershipAcquired & OnLeadershipLost>;

/** The store's lock that an election's leader holds: apart from the locks of jobs, whatever their names. */
export function leaderLockName(election: string): string {
  return `leader:${election}`;
}

/** A term in progress: its lease as the hooks see it, and the lock the node's lease keeper renews. */
interface Term {
  readonly lease: LeaderLease;
  readonly held: ActiveLock;
  readonly controller: AbortController;
}

/**
 * One node's part in one election. A follower tries the leader's lock about once per renewal interval (a third of
 * the lease), jittered so that followers do not call together, and never twice in 3/4 of an interval. The leader's
 * lease rides in the node's lease batch; its signal aborts before the lease can expire in the store.
 */
export class LeaderCampaign {
  private term: Term | null = null;
  private timer: NodeJS.Timeout | undefined;
  private stopped = false;
  /** Whether the last attempt failed on a store error: an outage is logged once. */
  private failing = false;
  private readonly configuration: RunLockConfiguration;

  constructor(
    readonly election: string,
    /** This node's `node`. */
    private readonly node: string,
    /** The lease, in ms. */
    readonly lease: number,
    private readonly hooks: LeadershipHooks,
    private readonly provider: LockProvider,
    private readonly executor: LockingTaskExecutor,
    private readonly logger: SchedulerLockLogger,
    private readonly random: () => number = Math.random,
  ) {
    // No cap: the lease is renewed for as long as the node leads.
    this.configuration = { name: leaderLockName(election), lockAtMostFor: Infinity, lockAtLeastFor: 0, lease };
  }

  /** The current term's lease while this node leads; `null` otherwise. */
  get leading(): LeaderLease | null {
    return this.term?.lease ?? null;
  }

  /** How often the leader renews and a follower tries: a third of the lease. */
  get interval(): number {
    return this.lease / 3;
  }

  /** Tries to lead now, then at the follower's pace. */
  start(): void {
    this.schedule(0);
  }

  /**
   * Ends the current term (`reason`), releasing the lease once `onLeadershipLost` has settled, and waits a whole
   * interval before trying again, so that another node can take over. Resolves to whether this node was leading.
   */
  async stepDown(reason: LeadershipEndReason): Promise<boolean> {
    const term = this.term;
    if (!term) return false;
    await this.end(term, reason, true);
    this.schedule(this.interval);
    return true;
  }

  /** A clean shutdown: no more attempts, and the current term ends (`shutdown`), its lease released. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.term) await this.end(this.term, 'shutdown', true);
  }

  /** As a killed process: no more attempts or renewals, no hook, no release; the lease expires in the store. */
  halt(): void {
    this.stopped = true;
    clearTimeout(this.timer);
    if (this.term) this.executor.keeper.untrack(this.term.held);
    this.term = null;
  }

  private schedule(delay: number): void {
    if (this.stopped) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.attempt(), delay);
    this.timer.unref();
  }

  /** A follower's pace: 3/4 to 1 interval, so a dead leader is replaced within the lease plus one interval. */
  private followerDelay(): number {
    return this.interval * (0.75 + 0.25 * this.random());
  }

  private async attempt(): Promise<void> {
    if (this.stopped || this.term) return;
    const requestedAt = performance.now();
    let lock: SimpleLock | undefined;
    try {
      const providerName = describeProvider(this.provider);
      const taking = awaitProviderCall(this.provider.lock(firstTake(this.configuration)), providerName, 'lock()');
      lock = usableLock(await taking, providerName, 'lock()');
      if (this.failing) this.logger.log(`Election "${this.election}": the store answers again`);
      this.failing = false;
    } catch (error) {
      if (!this.failing) {
        this.logger.warn(`Election "${this.election}": could not try to lead, retrying: ${describeError(error)}`);
      }
      this.failing = true;
    }
    if (lock && this.stopped) return void lock.unlock().catch(() => undefined); // shut down meanwhile
    if (!lock) return this.schedule(this.followerDelay());
    await this.begin(lock, requestedAt);
  }

  private async begin(lock: SimpleLock, requestedAt: number): Promise<void> {
    const controller = new AbortController();
    const lease: LeaderLease = {
      election: this.election,
      node: this.node,
      fencingToken: lock.fencingToken ?? null,
      since: new Date(),
      signal: controller.signal,
    };
    const listener = {
      providerName: describeProvider(this.provider),
      extended: (active: ActiveLock) => this.executor.keeper.reschedule(active),
      lost: (_active: ActiveLock, reason: LockLostReason) => this.lost(reason),
    };
    // Tracked by the node's lease keeper: renewed in the round trip that renews every lease of the node.
    const held = new ActiveLock({ lock }, this.configuration, requestedAt, this.node, null, listener);
    this.executor.keeper.track(held);
    const term: Term = { lease, held, controller };
    this.term = term;
    try {
      await this.hooks.onLeadershipAcquired?.(lease);
    } catch (error) {
      this.logger.error(
        `Election "${this.election}": onLeadershipAcquired failed, stepping down: ${describeError(error)}`,
      );
      if (this.term === term) await this.stepDown('hook-failed');
    }
  }

  /** The lease keeper found the lease lost, or about to expire unrenewed. */
  private lost(reason: LockLostReason): void {
    const term = this.term;
    if (!term) return;
    this.logger.warn(`Election "${this.election}": this node lost the lead (${reason})`);
    void this.end(term, reason, false).then(() => this.schedule(this.followerDelay()));
  }

  /**
   * Ends `term`: its signal aborts at once, then `onLeadershipLost` runs; the lease is released after it settles
   * (`release`), so the next leader starts once this one has stopped.
   */
  private async end(term: Term, reason: LeadershipEndReason, release: boolean): Promise<void> {
    if (this.term !== term) return;
    this.term = null;
    this.executor.keeper.untrack(term.held);
    term.controller.abort(new LeadershipEndedError(this.election, reason));
    try {
      await this.hooks.onLeadershipLost?.(term.lease);
    } catch (error) {
      this.logger.error(`Election "${this.election}": onLeadershipLost failed: ${describeError(error)}`);
    }
    if (!release) return;
    await term.held.lock.unlock().catch((error: unknown) => {
      this.logger.warn(
        `Election "${this.election}": could not release the lead; it expires on its own: ${describeError(error)}`,
      );
    });
  }
}
