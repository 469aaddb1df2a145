/** The part of cron 4's `CronTime` the schedule needs (cron is `@nestjs/schedule`'s dependency, not ours). */
export interface CronTimeLike {
  readonly timeZone?: string;
  readonly utcOffset?: number;
  readonly source: unknown;
  getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
}

/** How many upcoming fire times are sampled to find the shortest gap between two. */
const GAP_SAMPLES = 24;
/** ...within this horizon: cron looks no further than 8 years ahead, and a yearly job has few fire times. */
const GAP_HORIZON_MS = 4 * 365 * 86_400_000;

/**
 * The nominal fire times of a cron job, in its time zone. A tick is attributed to the fire time nearest
 * to the clock of the node it fires on: every node's timer fires at its own clock's fire time, so nodes
 * whose clocks differ compute the same occurrence, and a tick running late by less than half the
 * shortest gap still gets its own.
 */
export class CronSchedule {
  /** The shortest gap between two fire times (ms), sampled over the next {@link GAP_SAMPLES}. */
  readonly minGap: number;
  private readonly zone: string | undefined;

  constructor(private readonly cronTime: CronTimeLike) {
    this.zone = cronTime.timeZone ?? fixedZone(cronTime.utcOffset);
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

  /** The first fire time strictly after `ms`. */
  nextAfter(ms: number): number {
    return this.cronTime.getNextDateFrom(new Date(ms), this.zone).toMillis();
  }

  /** The fire time nearest to `now`: the occurrence a tick firing at `now` belongs to. */
  occurrenceAt(now: number): number {
    return this.nextAfter(now - this.minGap / 2 - 1);
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
