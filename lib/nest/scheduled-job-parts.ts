import type { SchedulerRegistry } from '@nestjs/schedule';
import type { CronTimeLike } from '../occurrence/cron-schedule.js';

/*
 * The one place that knows what `@nestjs/schedule` hands the registry: a `cron` 4 `CronJob`, or a Node.js
 * `Timeout` for an interval or a timeout. The registry proxy reads and patches these parts when a job is added;
 * everything else (presence, operator triggers, handler lookup) reads what it recorded then.
 */

/** A function a job's tick runs, as cron and Node's timers call it. */
export type TickCallback = (this: unknown, ...args: unknown[]) => unknown;

/** A cron job as `SchedulerRegistry.addCronJob` takes it. */
export type RegistryCronJob = Parameters<SchedulerRegistry['addCronJob']>[1];

/**
 * The parts of a `cron` 4 job the module reads and patches. Public in `cron`: `cronTime`, `context`,
 * `isActive`, `lastDate()`, `start()`, `fireOnTick()`; private: `_callbacks`, the functions a tick runs,
 * which the proxy replaces with the locked tick.
 */
export interface CronJobParts {
  _callbacks?: TickCallback[];
  context: unknown;
  readonly cronTime: CronTimeLike;
  readonly isActive: boolean;
  lastDate(): Date | null | undefined;
  start(): void;
  fireOnTick(): unknown;
}

/**
 * The parts of a Node.js `Timeout` (from `setInterval` / `setTimeout`) the module reads and patches; Node keeps
 * no public accessor for them: `_onTimeout` (what a tick runs), `_repeat` (an interval's period, ms),
 * `_idleTimeout` (the delay, ms).
 */
export interface TimerParts {
  _onTimeout?: TickCallback;
  readonly _repeat?: number | null;
  readonly _idleTimeout?: number;
}

/** A locked job's schedule as operators see it, recorded when the job is added to the registry. */
export interface JobSchedule {
  readonly kind: 'cron' | 'interval' | 'timeout';
  /** The cron expression (a one-shot job's date), or the period / delay in ms. */
  readonly schedule: string;
  readonly timeZone: string | null;
}

export function cronJobParts(job: RegistryCronJob): CronJobParts {
  return job as unknown as CronJobParts;
}

/** The schedule of a cron job: its expression and time zone. */
export function cronSchedule({ cronTime }: CronJobParts): JobSchedule {
  return { kind: 'cron', schedule: String(cronTime.source), timeZone: cronTime.timeZone ?? null };
}

/** The period of a Node.js interval, or the delay of a timeout, ms. */
export function timerPeriod(timer: TimerParts): number | undefined {
  return timer._repeat ?? timer._idleTimeout;
}

/** The schedule of an interval or timeout: its period or delay, ms. */
export function timerSchedule(kind: 'interval' | 'timeout', period: number | undefined): JobSchedule {
  return { kind, schedule: String(period ?? ''), timeZone: null };
}
