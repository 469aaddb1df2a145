/** The part of cron 4's `CronTime` the schedule needs (cron is `@nestjs/schedule`'s dependency, not ours). */
export interface CronTimeLike {
  readonly timeZone?: string;
  readonly utcOffset?: number;
  readonly source: unknown;
  /** A one-shot job (`@Cron(new Date(...))`): `source` is a luxon `DateTime`, fired once. */
  readonly realDate?: boolean;
  getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
}

/** How many upcoming fire times are sampled to find the shortest gap between two. */
const GAP_SAMPLES = 24;
/** ...within this horizon: cron looks no further than 8 years ahead, and a yearly job has few fire times. */
const GAP_HORIZON_MS = 4 * 365 * 86_400_000;
/** Schedules kept for reuse, by expression and zone; a runtime job per tenant usually shares a few. */
const SHARED_SCHEDULES = 1_000;
const shared = new Map<string, CronSchedule>();

/**
 * The nominal fire times of a cron job, in its time zone. A tick belongs to the latest fire time its node's
 * clock has reached: cron fires a job only once its own clock is at the fire time, never before, however
 * late a blocked event loop makes it. So nodes whose clocks differ compute the same occurrence, and a tick
 * running late by most of a gap still claims its own occurrence, never the next one.
 */
export class CronSchedule {
  /** The shortest gap between two fire times (ms), sampled over the next {@link GAP_SAMPLES}. */
  readonly minGap: number;
  private readonly zone: string | undefined;
  private readonly oneShot: number | undefined;
  /** The occurrence last attributed and the fire time after it: every tick of the same second asks again. */
  private latest: { at: number; next: number } | undefined;

  /**
   * The schedule of `cronTime`, shared with every job of the same expression and zone: a node running a
   * thousand jobs on one expression computes each fire time once, not a thousand times.
   */
  static of(cronTime: CronTimeLike): CronSchedule {
    if (typeof cronTime.source !== 'string') return new CronSchedule(cronTime);
    const key = `${cronTime.source}\n${cronTime.timeZone ?? ''}\n${cronTime.utcOffset ?? ''}`;
    let schedule = shared.get(key);
    if (!schedule) {
      if (shared.size >= SHARED_SCHEDULES) shared.delete(shared.keys().next().value!);
      schedule = new CronSchedule(cronTime);
      shared.set(key, schedule);
    }
    return schedule;
  }

  constructor(private readonly cronTime: CronTimeLike) {
    this.zone = cronTime.timeZone ?? fixedZone(cronTime.utcOffset);
    this.oneShot = cronTime.realDate ? (cronTime.source as { toMillis(): number }).toMillis() : undefined;
    let gap = Infinity;
    const horizon = Date.now() + GAP_HORIZON_MS;
    let previous = this.nextAfter(Date.now());
    for (let i = 1; i < GAP_SAMPLES && previous < horizon; i++) {
      const next = this.nextAfter(previous);
      gap = Math.min(gap, next - previous);
      previous = next;
    }
    this.minGap = gap;
  }

  /** The first fire time strictly after `ms`; `Infinity` once a one-shot job's time has passed. */
  nextAfter(ms: number): number {
    if (this.oneShot !== undefined) return this.oneShot > ms ? this.oneShot : Infinity;
    return this.cronTime.getNextDateFrom(new Date(ms), this.zone).toMillis();
  }

  /**
   * The occurrence a tick firing at `now` belongs to: the latest fire time at or before `now` (the next
   * one for a tick with none behind it, such as a one-shot job fired by hand).
   */
  occurrenceAt(now: number): number {
    const known = this.latest;
    if (known && known.at <= now && now < known.next) return known.at;
    if (known && known.next <= now) {
      // The usual case: the first tick of the fire time after the one last attributed.
      const next = this.nextAfter(known.next);
      if (next > now) return this.remember(known.next, next);
    }
    // No tick since start, a tick late by more than a gap, or a clock stepped back: search back from now.
    const at = this.latestWithin(now, GAP_HORIZON_MS) ?? this.nextAfter(now);
    return this.remember(at, this.nextAfter(at));
  }

  private remember(at: number, next: number): number {
    this.latest = { at, next };
    return at;
  }

  /** The latest fire time in `(now - window, now]`, if any. */
  latestWithin(now: number, window: number): number | undefined {
    // Look back one gap, then twice as far, and so on: a long window costs a few steps, not one per fire time.
    for (let back = Math.min(this.minGap, window); ; back = Math.min(back * 2, window)) {
      let time = this.nextAfter(now - back);
      if (time <= now) {
        for (let next = this.nextAfter(time); next <= now; next = this.nextAfter(next)) time = next;
        return time;
      }
      if (back >= window) return undefined;
    }
  }
}

/** cron's `utcOffset` (minutes) as the fixed zone name it uses itself. */
function fixedZone(utcOffset: number | undefined): string | undefined {
  if (utcOffset === undefined) return undefined;
  const sign = utcOffset < 0 ? '-' : '+';
  const hours = String(Math.trunc(Math.abs(utcOffset) / 60)).padStart(2, '0');
  const minutes = String(Math.abs(utcOffset) % 60).padStart(2, '0');
  return `UTC${sign}${hours}:${minutes}`;
}
