/** ` (job "name")` after a lock's name in a message, when the lock belongs to a job. */
export function jobLabel(jobName: string | undefined): string {
  return jobName ? ` (job "${jobName}")` : '';
}

/** An error's message, or the thrown value itself when it is not an `Error`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/**
 * `text` with the password of every URL in it masked (`redis://app:s3cret@cache` → `redis://app:***@cache`), also
 * of one without a scheme (`:s3cret@cache:6379`): for a message that quotes what a user typed or configured.
 */
export function withoutCredentials(text: string): string {
  // Up to the last `@` before the host, as URL parsers read it: a password may hold an `@` of its own.
  return text.replace(/(^|[\s"'(=,]|:\/\/)([^\s"'(=,:@/]*):[^\s"'/]*@/g, '$1$2:***@');
}

/**
 * A value as a message quotes it: JSON (a URL's password masked, see {@link withoutUrlPassword}), a number as
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
  return typeof member === 'string' ? withoutUrlPassword(member) : member;
}

/**
 * `text` with its password masked when it is a URL that has one (`postgres://app:s3cret@db` →
 * `postgres://app:***@db`): the URL is parsed to find the password, so only a real one is masked.
 */
export function withoutUrlPassword(text: string): string {
  let password: string;
  try {
    password = new URL(text).password;
  } catch {
    return text;
  }
  if (password === '') return text;
  const written = text.lastIndexOf(`:${password}@`);
  if (written >= 0) return `${text.slice(0, written)}:***${text.slice(written + password.length + 1)}`;
  const masked = new URL(text);
  masked.password = '***';
  return masked.href;
}
