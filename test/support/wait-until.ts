/**
 * Polls `condition` every `intervalMs` until it holds; rejects with `description` after `timeoutMs`.
 * For states no event announces (a counter, a Redis connection list); prefer an event when one exists.
 */
export async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  description: string,
  { timeoutMs = 10_000, intervalMs = 20 }: { timeoutMs?: number; intervalMs?: number } = {},
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`Timed out after ${timeoutMs} ms waiting until ${description}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** A promise with its `resolve` exposed, to hold a job in flight until the test lets it go. */
export interface Deferred<T = void> {
  readonly promise: Promise<T>;
  resolve(value: T): void;
}

/** A new {@link Deferred}. */
export function deferred<T = void>(): Deferred<T> {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((settle) => (resolve = settle));
  return { promise, resolve };
}
