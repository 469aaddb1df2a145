import { quoted } from './message-text.js';

/**
 * A length of time: a number of milliseconds, or a {@link DurationString} such as `'500ms'`, `'30s'`,
 * `'5m'`, `'2h'`, `'1d'`, a compound `'1h30m'`, or ISO-8601 `'PT30S'`, `'PT1H30M'`, `'P1D'`. A string
 * known only at run time (an environment variable) goes through {@link parseDuration} first.
 */
export type Duration = number | DurationString;

/**
 * What a duration option takes: a {@link Duration}, or any `string`, such as a `ConfigService` value or an
 * environment variable. Every option is parsed when the app starts (or the provider is built), and a
 * malformed string fails there, naming the option and the value. TypeScript cannot keep rejecting a literal
 * such as `'10 minutes'` in a type that accepts `string`; annotate a constant as {@link Duration} for that.
 */
export type DurationInput = Duration | string;

/**
 * A duration string the compiler can check: a number and a unit (`ms`, `s`, `m`, `h`, `d`), several
 * from the largest unit down (`'1h30m'`, `'1m30s'`), or ISO-8601 (`'PT30S'`, `'PT1H30M'`, `'P1DT12H'`).
 * `'10 minutes'` is a type error. {@link parseDuration} accepts a little more at run time (any unit
 * order, upper-case units, a plain number of milliseconds) and rejects what this type cannot tell
 * (a negative number, a space before the unit: TypeScript reads `'10 '` as a number).
 */
export type DurationString = UnitDuration | IsoDuration;

/** One `<number><unit>` part of a duration string, or nothing. */
type Part<Unit extends string> = `${number}${Unit}` | '';
type UnitDuration = Exclude<`${Part<'d'>}${Part<'h'>}${Part<'m'>}${Part<'s'>}${Part<'ms'>}`, ''>;
type IsoTime = Exclude<`${Part<'H'>}${Part<'M'>}${Part<'S'>}`, ''>;
type IsoDuration = `P${number}D` | `PT${IsoTime}` | `P${number}DT${IsoTime}`;

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 };
const COMPOUND = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/i;
const COMPOUND_PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/gi;
const ISO_8601 = /^P(?:(\d+(?:\.\d+)?)D)?(?:T(?:(\d+(?:\.\d+)?)H)?(?:(\d+(?:\.\d+)?)M)?(?:(\d+(?:\.\d+)?)S)?)?$/i;
const PLAIN_MS = /^\d+(?:\.\d+)?$/;

/**
 * Converts a {@link Duration} to milliseconds. Takes any string, so a duration known only at run time
 * (`parseDuration(process.env.LOCK_FOR ?? '10m')`) is checked here, with the input in the error.
 *
 * @throws Error quoting the input when it is not a finite, non-negative duration.
 */
export function parseDuration(value: number | string): number {
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error(`Invalid duration ${value}: not a finite number of milliseconds`);
    if (value < 0) throw new Error(`Invalid duration ${value}: must not be negative`);
    return value;
  }
  if (typeof value !== 'string') {
    throw new Error(`Invalid duration ${quoted(value)}: expected milliseconds or a string such as '30s'`);
  }
  const text = value.trim();
  if (PLAIN_MS.test(text)) return Number(text);
  if (COMPOUND.test(text)) {
    let total = 0;
    for (const [, amount, unit] of text.matchAll(COMPOUND_PART)) total += Number(amount) * UNIT_MS[unit.toLowerCase()];
    return total;
  }
  const iso = ISO_8601.exec(text);
  if (iso && text.toUpperCase() !== 'P' && !/T$/i.test(text)) {
    const [, days = '0', hours = '0', minutes = '0', seconds = '0'] = iso;
    return Math.round(
      Number(days) * UNIT_MS.d + Number(hours) * UNIT_MS.h + Number(minutes) * UNIT_MS.m + Number(seconds) * UNIT_MS.s,
    );
  }
  const hint = text.startsWith('-')
    ? 'must not be negative'
    : "expected milliseconds, '30s', '1h30m' or ISO-8601 'PT30S'";
  throw new Error(`Invalid duration ${quoted(value)}: ${hint}`);
}

/** Milliseconds as the shortest exact unit string (`90000` → `'90s'`, `5400000` → `'1h30m'`), for logs. */
export function formatDuration(ms: number): string {
  if (ms === 0 || !Number.isInteger(ms)) return `${ms}ms`;
  let rest = ms;
  let text = '';
  for (const unit of ['d', 'h', 'm', 's', 'ms']) {
    const size = UNIT_MS[unit];
    if (rest >= size) {
      text += `${Math.floor(rest / size)}${unit}`;
      rest %= size;
    }
  }
  return text;
}

/** How long an outage lasted, for a log line: `2.4s` under a minute, else whole units (`3m12s`, `1h5m`). */
export function describeOutage(ms: number): string {
  return ms < 60_000 ? `${(ms / 1000).toFixed(1)}s` : formatDuration(Math.round(ms / 1000) * 1000);
}
