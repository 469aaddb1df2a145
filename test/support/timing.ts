import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sleeps until `performance.now()` reaches `target`. For claims that are about time itself (a TTL
 * running out), where no event exists to wait on.
 */
export async function sleepUntil(target: number): Promise<void> {
  const wait = target - performance.now();
  if (wait > 0) await sleep(Math.ceil(wait));
}

/** Blocks the event loop, as a node busy with a thousand due ticks does. */
export function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

/** What {@link pollUntil} found, and when (`performance.now()` right after the successful probe). */
export interface Polled<T> {
  readonly value: T;
  readonly at: number;
}

/**
 * Calls `probe` every `intervalMs` until it resolves to something other than `undefined`. Probes at
 * least once after `deadline` (a `performance.now()` value), so a stalled event loop cannot fail a
 * claim that had become true by then; rejects if even that probe finds nothing.
 */
export async function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  deadline: number,
  intervalMs = 10,
  what = 'condition',
): Promise<Polled<T>> {
  for (;;) {
    const pastDeadline = performance.now() >= deadline;
    const value = await probe();
    if (value !== undefined) return { value, at: performance.now() };
    if (pastDeadline) {
      throw new Error(`${what} not met ${Math.round(performance.now() - deadline)} ms after the deadline`);
    }
    await sleep(intervalMs);
  }
}

/** How a promise ended within a time limit. */
export type Settlement<T> =
  | { readonly status: 'fulfilled'; readonly value: T; readonly afterMs: number }
  | { readonly status: 'rejected'; readonly reason: unknown; readonly afterMs: number }
  | { readonly status: 'pending'; readonly afterMs: number };

/** Waits at most `ms` for `promise`; reports `pending` instead of hanging the test when it does not settle. */
export async function settleWithin<T>(promise: Promise<T>, ms: number): Promise<Settlement<T>> {
  const startedAt = performance.now();
  const elapsed = () => performance.now() - startedAt;
  const timer = new AbortController();
  try {
    return await Promise.race([
      promise.then(
        (value) => ({ status: 'fulfilled' as const, value, afterMs: elapsed() }),
        (reason: unknown) => ({ status: 'rejected' as const, reason, afterMs: elapsed() }),
      ),
      // The abort in `finally` rejects this sleep once the race is decided; that rejection means nothing.
      sleep(ms, undefined, { signal: timer.signal }).then(
        () => ({ status: 'pending' as const, afterMs: elapsed() }),
        () => ({ status: 'pending' as const, afterMs: elapsed() }),
      ),
    ]);
  } finally {
    timer.abort();
  }
}
