import type { FireTimes } from './job-health.js';

/** The part of the `cron` package this needs: its `CronTime` (cron 3 and 4 alike). */
interface CronPackage {
  readonly CronTime: new (
    source: string,
    timeZone?: string,
  ) => {
    sendAt(): { toJSDate(): Date };
    getNextDateFrom(start: Date, timeZone?: string): { toMillis(): number };
  };
}

/**
 * `cron` is `@nestjs/schedule`'s dependency, not ours: it is present wherever an app uses this package, but a
 * process reading the cluster from outside (the CLI) may not find it. A variable, so TypeScript does not
 * resolve the package at build time.
 */
const CRON_PACKAGE = 'cron';

let loading: Promise<CronPackage | undefined> | undefined;

/** `cron`, loaded on first use; `undefined` when it cannot be loaded. */
function loadCron(): Promise<CronPackage | undefined> {
  loading ??= import(CRON_PACKAGE).then(
    (loaded: Partial<CronPackage> & { default?: Partial<CronPackage> }) => {
      // Node exposes a CommonJS package's exports as named exports when it can tell them, always as `default`.
      const CronTime = loaded.CronTime ?? loaded.default?.CronTime;
      return typeof CronTime === 'function' ? { CronTime } : undefined;
    },
    () => undefined,
  );
  return loading;
}

/**
 * When a cron expression fires next after now, computed with `cron`'s `CronTime` in `timeZone`
 * (without one, in the time zone of the process that asks, which may differ from the app's). `null` when
 * `cron` cannot be loaded or does not accept the expression.
 */
export async function nextCronFireTime(expression: string, timeZone: string | null): Promise<Date | null> {
  const cron = await loadCron();
  if (!cron) return null;
  try {
    return new cron.CronTime(expression, timeZone ?? undefined).sendAt().toJSDate();
  } catch {
    return null;
  }
}

/**
 * The fire times of a cron expression in `timeZone`, as the scheduler computes them; `null` when `cron` cannot
 * be loaded or does not accept the expression.
 */
export async function cronFireTimes(expression: string, timeZone: string | null): Promise<FireTimes | null> {
  const key = `${expression}\n${timeZone ?? ''}`;
  if (parsed.has(key)) return parsed.get(key)!;
  const cron = await loadCron();
  let fireTimes: FireTimes | null = null;
  try {
    const zone = timeZone ?? undefined;
    const cronTime = cron && new cron.CronTime(expression, zone);
    if (cronTime) fireTimes = remembered((ms) => cronTime.getNextDateFrom(new Date(ms), zone).toMillis());
  } catch {
    // An expression `cron` refuses has no fire times.
  }
  if (parsed.size >= PARSED_LIMIT) parsed.delete(parsed.keys().next().value!);
  parsed.set(key, fireTimes);
  return fireTimes;
}

/** `nextAfter`, remembered: each health check walks mostly the fire times the one before walked. */
function remembered(nextAfter: (ms: number) => number): FireTimes {
  const known = new Map<number, number>();
  return {
    nextAfter(ms) {
      let next = known.get(ms);
      if (next === undefined) {
        if (known.size >= REMEMBERED_LIMIT) known.clear();
        known.set(ms, (next = nextAfter(ms)));
      }
      return next;
    },
  };
}
const REMEMBERED_LIMIT = 10_000;

/** Fire times by expression and zone: every health check of every job asks again. */
const parsed = new Map<string, FireTimes | null>();
const PARSED_LIMIT = 1_000;
