import { Inject, Injectable, Logger } from '@nestjs/common';
import { FaultLog } from '../core/executor/fault-log.js';
import { LockEvents } from '../core/task/lock-events.js';
import { ClusterAdmin } from '../operators/cluster-admin.js';
import { UNHEALTHY_STATES, type ClusterJobHealth, type JobHealthState } from '../operators/job-health.js';
import type {
  HealthReportClaim,
  HealthReportKind,
  HealthTurn,
  HealthTurnBid,
  OperatorProvider,
} from '../operators/operator-provider.js';
import { SCHEDULER_LOCK_OPERATOR_PROVIDER, SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** Who pauses a job after `health.pauseAfter` failed runs, in its history. */
export const SCHEDULER_ACTOR = 'scheduler';

/** The health turn outlives a heartbeat interval by half of one: a late timer does not move it. */
function healthTurnLease(heartbeatInterval: number): number {
  return Math.ceil(heartbeatInterval * 1.5);
}

/**
 * This node's watch over every job's health, cluster-wide, in the heartbeats that give it the health turn: one node
 * at a time reads the cluster's health (`ClusterPresence` bids for the turn in each heartbeat). Nothing here
 * is on a tick's path. It emits `missed` for the occurrences, and `failing` for the streaks of failed runs, whose
 * report it claimed in the store (one node each), and `healthy` when a job recovers. The turn keeps the unhealthy
 * jobs of its holder's last check: its next holder emits `healthy` for them, and no other node does.
 */
@Injectable()
export class JobHealthWatch {
  private readonly admin: ClusterAdmin | undefined;
  private readonly faults: FaultLog;
  /** Each job's state at the last check, by job name; while another node holds the turn, none. */
  private readonly states = new Map<string, JobHealthState>();
  /** The newest missed occurrence whose report this node claimed (or found claimed), by job name (epoch ms). */
  private readonly claimedUpTo = new Map<string, number>();
  /** When this node's last bid was sent (epoch ms), and until when the turn it won is surely its own. */
  private bidAt = 0;
  private turnUntil = 0;
  /** The check under way, if any; stop() awaits it, as the app may close the store's connections next. */
  private checking: Promise<unknown> | undefined;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    @Inject(SCHEDULER_LOCK_OPERATOR_PROVIDER) private readonly store: OperatorProvider | undefined,
    private readonly events: LockEvents,
  ) {
    this.admin = store && new ClusterAdmin(store, settings.heartbeatInterval, settings.health);
    this.faults = new FaultLog(new Logger('SchedulerLock'), settings.outages);
  }

  /** What this node's heartbeat bids for the health turn, with the unhealthy jobs of its last check. */
  bid(): HealthTurnBid {
    this.bidAt = Date.now();
    const unhealthy = [...this.states].filter(([, state]) => UNHEALTHY_STATES.has(state));
    return { lease: healthTurnLease(this.settings.heartbeatInterval), unhealthy: Object.fromEntries(unhealthy) };
  }

  /** The bid that hands the turn back as this node stops, when it holds it: the next heartbeat of a node takes it. */
  handBack(): HealthTurnBid | undefined {
    return this.holdsTurn() ? { ...this.bid(), lease: 0 } : undefined;
  }

  /** Takes what the heartbeat's bid got: the turn, or `null` while another node holds it. */
  turn(turn: HealthTurn | null): void {
    if (!turn || turn.taken) {
      // A node that did not hold the turn has seen none of the last checks: its former holder left what they found.
      this.states.clear();
      this.claimedUpTo.clear();
      for (const [jobName, state] of Object.entries(turn?.unhealthy ?? {})) {
        this.states.set(jobName, state as JobHealthState);
      }
    }
    // Counted from before the bid was sent: a node whose later bids go unanswered stops checking before the store
    // gives the turn to another.
    this.turnUntil = turn ? this.bidAt + healthTurnLease(this.settings.heartbeatInterval) : 0;
  }

  /**
   * Checks the cluster's health if this node holds the turn, and resolves once the check ended. One check at a
   * time: a slow store delays the next one instead of stacking them.
   */
  async checkOnTurn(): Promise<void> {
    if (!this.holdsTurn()) return;
    this.checking ??= this.check().finally(() => (this.checking = undefined));
    await this.checking;
  }

  private holdsTurn(): boolean {
    return Date.now() < this.turnUntil;
  }

  /** Stops the watch once the check under way has ended. */
  async stop(): Promise<void> {
    await this.checking;
  }

  /** @internal Checks every job's health now, emits what changed, and resolves to it. */
  async check(): Promise<ClusterJobHealth[]> {
    if (!this.admin) return [];
    const sentAt = performance.now();
    try {
      const healths = await this.admin.listHealth();
      this.settings.instrumentation?.healthChecked?.(healths);
      const claimed = await this.claimReports(healths);
      // A pause that fails stops no other job's report: the reports claimed are not asked again.
      let failure: { error: unknown } | undefined;
      for (const health of healths) await this.report(health, claimed).catch((error) => (failure ??= { error }));
      if (failure) throw failure.error;
      this.faults.storeAnswered('health');
      return healths;
    } catch (error) {
      // The next check sees the same misses: their reports are claimed only when the check emits them.
      this.faults.storeFailed('health', `Job health not checked: ${(error as Error).message}`, error, sentAt);
      return [];
    }
  }

  /**
   * Claims every report `healths` call for, in one store call: the misses newer than this node's last claim, and
   * each streak of failures this node has not seen yet. Resolves to the claims this node won.
   */
  private async claimReports(healths: readonly ClusterJobHealth[]): Promise<HealthReportClaim[]> {
    const claims: HealthReportClaim[] = [];
    const claimedUpTo = new Map<string, number>();
    for (const { jobName, lockName, state, missed, failingSince } of healths) {
      // The misses stay listed while the history keeps them: only those newer than this node's last claim are asked.
      const fresh = missed.filter((at) => at.getTime() > (this.claimedUpTo.get(jobName) ?? -Infinity));
      claims.push(...fresh.map((at) => ({ lockName, kind: 'missed' as const, at })));
      if (fresh.length > 0) claimedUpTo.set(jobName, fresh[fresh.length - 1].getTime());
      if (state === 'failing' && this.states.get(jobName) !== state) {
        claims.push({ lockName, kind: 'failing', at: failingSince! });
      }
    }
    if (claims.length === 0) return [];
    const claimed = await this.store!.claimHealthReports(claims);
    for (const [jobName, upTo] of claimedUpTo) this.claimedUpTo.set(jobName, upTo);
    return claimed;
  }

  private async report(health: ClusterJobHealth, claimed: readonly HealthReportClaim[]): Promise<void> {
    const { jobName, lockName, state } = health;
    const base = { lockName, jobName, node: this.settings.node, fencingToken: null };
    const won = (kind: HealthReportKind) =>
      claimed.filter((claim) => claim.lockName === lockName && claim.kind === kind);
    const occurrences = won('missed').map((claim) => claim.at);
    if (occurrences.length > 0) this.events.emit({ type: 'missed', ...base, occurrences, at: new Date() });
    const before = this.states.get(jobName);
    if (state !== before) {
      // The first node to claim the streak's report emits it. A claim that fails is tried again at the next check.
      if (state === 'failing' && won('failing').length > 0) {
        this.events.emit({ type: 'failing', ...base, failuresInARow: health.failuresInARow, at: new Date() });
      } else if (state === 'on-time' && before !== undefined && UNHEALTHY_STATES.has(before)) {
        this.events.emit({ type: 'healthy', ...base, at: new Date() });
      }
      this.states.set(jobName, state);
    }
    // Last, as the only store call here: a pause that fails is asked again at the next check.
    const { pauseAfter } = this.settings.health;
    if (pauseAfter !== null && state !== 'paused' && health.failuresInARow >= pauseAfter) {
      // One node's pause is recorded; the others find the job paused already.
      const reason = `${health.failuresInARow} failures in a row (health.pauseAfter: ${pauseAfter})`;
      if (await this.store!.pause(lockName, { actor: SCHEDULER_ACTOR, reason })) {
        this.events.emit({
          type: 'operator',
          action: 'pause',
          ...base,
          actor: SCHEDULER_ACTOR,
          reason,
          at: new Date(),
        });
      }
    }
  }
}
