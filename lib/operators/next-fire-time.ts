import type { FireTimes } from './job-health.js';

/** The part of the `cron` package this needs: its `CronTime` (cron 3 and 4 alike). */
interface CronPackage {
  readonly CronTime: new (
    source: string,
    timeZone?: string,
  ) => {
    sendAt(): { toMillis(): number };
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
 * When a cron expression fires next after now (epoch ms), computed with `cron`'s `CronTime` in `timeZone`
 * (without one, in the time zone of the process that asks, which may differ from the app's). `null` when
 * `cron` cannot be loaded or does not accept the expression.
 */
export async function nextCronFireTime(expression: string, timeZone?: string): Promise<number | null> {
  const cron = await loadCron();
  if (!cron) return null;
  try {
    return new cron.CronTime(expression, timeZone).sendAt().toMillis();
  } catch {
    return null;
  }
}

/**
 * The fire times of a cron expression in `timeZone`, as the scheduler computes them; `null` when `cron` cannot
 * be loaded or does not accept the expression.
 */
export async function cronFireTimes(expression: string, timeZone?: string): Promise<FireTimes | null> {
  const cron = await loadCron();
  if (!cron) return null;
  try {
    const cronTime = new cron.CronTime(expression, timeZone);
    return { nextAfter: (ms) => cronTime.getNextDateFrom(new Date(ms), timeZone).toMillis() };
  } catch {
    return null;
  }
}
