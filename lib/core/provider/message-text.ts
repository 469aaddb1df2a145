/** ` (job "name")` after a lock's name in a message, when the lock belongs to a job. */
export function jobLabel(jobName: string | null): string {
  return jobName ? ` (job "${jobName}")` : '';
}

/** An error's message, or the thrown value itself when it is not an `Error`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** What stands in a message for a password, or for a value that may hold one but reads as no URL. */
const MASK = '***';
/** The scheme read into a value that has none (`:pw@cache:6379`, `/tmp/redis.sock?password=pw`), as ioredis does. */
const NO_SCHEME = 'redis://';

/**
 * `value` (a URL or whatever a user typed or configured) as a message may quote it: parsed as a WHATWG URL,
 * its password and every query parameter named like one (`?password=`, ioredis's `sentinelPassword`, pg's
 * `sslpassword`) masked, the user name kept: `redis://app:***@cache:6379`. A value that does not parse but holds
 * an `@` is masked whole; any other value is returned as it is.
 */
export function withoutCredentials(value: string): string {
  const schemeless = !value.includes('://');
  let url: URL;
  try {
    url = new URL(schemeless ? `${NO_SCHEME}${value}` : value);
  } catch {
    return value.includes('@') ? MASK : value;
  }
  const secretParameters = [...new Set(url.searchParams.keys())].filter((key) => key.toLowerCase().includes('pass'));
  if (!url.password && secretParameters.length === 0) return value;
  if (url.password) url.password = MASK;
  for (const key of secretParameters) url.searchParams.set(key, MASK);
  return schemeless ? url.href.slice(NO_SCHEME.length) : url.href;
}

/**
 * A value as a message quotes it: JSON (a URL's password masked, see {@link withoutCredentials}), a number as
 * written (`NaN`, `Infinity`, which JSON prints as null), or its type when JSON has none (`undefined`, a function).
 */
export function quoted(value: unknown): string {
  if (typeof value === 'number') return String(value);
  if (typeof value === 'bigint') return `${value}n`;
  try {
    return JSON.stringify(value, quotedMember) ?? typeof value;
  } catch {
    return `an unprintable ${typeof value}`;
  }
}

function quotedMember(_key: string, member: unknown): unknown {
  if (typeof member === 'bigint') return `${member}n`;
  return typeof member === 'string' ? withoutCredentials(member) : member;
}
