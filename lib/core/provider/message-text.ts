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

/** A value as a message quotes it: JSON, or its type when JSON has none (`undefined`, a function). */
export function quoted(value: unknown): string {
  return JSON.stringify(value) ?? typeof value;
}
