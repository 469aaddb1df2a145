import { setTimeout as sleep } from 'node:timers/promises';

import { pollUntil as pollOnClock, REAL_CLOCK, type Polled } from '../../lib/provider-tests/timing.js';

/** The conformance kit's own poll, on the real clock: see its `pollUntil`. */
export function pollUntil<T>(
  probe: () => Promise<T | undefined>,
  deadline: number,
  intervalMs?: number,
  what?: string,
): Promise<Polled<T>> {
  return pollOnClock(REAL_CLOCK, probe, deadline, intervalMs, what);
}

/** Blocks the event loop, as a node busy with a thousand due ticks does. */
export function blockFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
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

/** An hour, in milliseconds. */
export const HOUR_MS = 3_600_000;

/**
 * The start of the current hour, once the next hour is at least `roomMs` away (it waits out an hour's last
 * `roomMs`): the hourly occurrence a catch-up test expects must not move on while the test runs.
 */
export async function hourStartWithRoom(roomMs = 15_000): Promise<number> {
  const untilNextHour = HOUR_MS - (Date.now() % HOUR_MS);
  if (untilNextHour < roomMs) await sleep(untilNextHour + 100);
  return Math.floor(Date.now() / HOUR_MS) * HOUR_MS;
}
