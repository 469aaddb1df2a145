import type { DurationInput } from '../core/provider/duration.js';

/** The kinds of `@nestjs/schedule` job, by their registry method. */
export type JobKind = 'cron' | 'interval' | 'timeout';

/** The once-per-occurrence options of a locked cron job (part of `@SchedulerLock()`'s options). */
export interface OccurrenceOptions {
  /**
   * Cron jobs only: run each scheduled occurrence (nominal fire time) at most once across the cluster,
   * even when a node's clock or timer is behind. Default `true` for cron jobs; `false` gives plain
   * ShedLock behaviour. Interval and timeout jobs have no nominal fire time and always behave like ShedLock.
   */
  occurrence?: boolean;
  /**
   * Cron jobs: how far apart the nodes' clocks (plus timer lateness) may be. A re-run of a crashed
   * occurrence stops this long before the next fire time. Default: the smaller of 5 s and a quarter of
   * the shortest gap between fire times; must be below half that gap (a startup error otherwise).
   */
  maxClockSkew?: DurationInput;
  /**
   * Cron jobs: when the node running an occurrence dies (its lock expires before the run finished),
   * `'skip'` the occurrence (default) or `'rerun'` it on another node — at most `maxRecoveries` times,
   * and never once the next occurrence is due. Works best with `keepAlive`, which detects a dead node
   * within one lease.
   */
  onCrash?: 'skip' | 'rerun';
  /** With `onCrash: 'rerun'`: how many re-runs of one occurrence at most. Default 1. */
  maxRecoveries?: number;
  /**
   * With `onCrash: 'rerun'`: how long an occurrence's lock must have been gone (by Redis's clock) while
   * its record still says running before another node re-runs it. Meanwhile the run's node can come back
   * and record how the run ended: its release may have failed because Redis was down or cut off. An
   * occurrence runs twice only when its node was cut off from Redis for longer than its lease (or
   * `lockAtMostFor`) plus this grace. Default: the `keepAlive` lease, at least 5 s.
   */
  recoveryGrace?: DurationInput;
  /**
   * Cron jobs: when no node ran the most recent fire time (the whole cluster was down), run it once at
   * start-up if it is at most `window` old (`true`: 1 hour). Never more than one catch-up run per job
   * per start-up, cluster-wide. Default off.
   */
  catchUp?: boolean | { window: DurationInput };
  /**
   * Cron jobs: retry an occurrence whose run failed (threw), on any node, at most once per attempt, and never
   * once the next occurrence is due. `false` turns off the module's `retry`. Default: the module's `retry`.
   */
  retry?: RetryOptions | false;
}

/** Options of `retry`, for a job or as the module's default; another key throws naming it. */
export interface RetryOptions {
  /** How many retries of a failed occurrence at most: a whole number from 1. */
  retries: number;
  /** How long after a failed attempt the first retry starts; each next wait doubles. Default 1 s. */
  backoff?: DurationInput;
}
