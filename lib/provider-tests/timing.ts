import { setTimeout as sleep } from 'node:timers/promises';
import type { KitClock } from './provider-subject.js';

/** The process's real clock: `performance.now()`, and timers that fire as real time passes. */
export const REAL_CLOCK: KitClock = { now: () => performance.now(), sleep: (ms) => sleep(ms) };

/**
 * Sleeps until `clock.now()` reaches `target`. For claims that are about time itself (a TTL running out),
 * where no event exists to wait on.
 */
export async function sleepUntil(clock: KitClock, target: number): Promise<void> {
  const wait = target - clock.now();
  if (wait > 0) await clock.sleep(Math.ceil(wait));
}

/** What {@link pollUntil} found, and when (`clock.now()` right after the successful probe). */
export interface Polled<T> {
  readonly value: T;
  readonly at: number;
}

/**
 * Calls `probe` every `intervalMs` of `clock` until it resolves to something other than `undefined`. Probes at
 * least once after `deadline` (a `clock.now()` value), so a stalled event loop cannot fail a claim that had
 * become true by then; rejects if even that probe finds nothing.
 */
export async function pollUntil<T>(
  clock: KitClock,
  probe: () => Promise<T | undefined>,
  deadline: number,
  intervalMs = 10,
  what = 'condition',
): Promise<Polled<T>> {
  for (;;) {
    const pastDeadline = clock.now() >= deadline;
    const value = await probe();
    if (value !== undefined) return { value, at: clock.now() };
    if (pastDeadline) {
      throw new Error(`${what} not met ${Math.round(clock.now() - deadline)} ms after the deadline`);
    }
    await clock.sleep(intervalMs);
  }
}

/**
 * Resolves like `promise`, sleeping on `clock` meanwhile (a fake clock moves only while the kit sleeps on it):
 * for a step that timers reach, which no event announces. Rejects if it is still pending after `deadline`.
 */
export async function awaitUntil<T>(clock: KitClock, promise: Promise<T>, deadline: number, what: string): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined); // awaited below; a rejection before then is not unhandled
  await pollUntil(clock, async () => settled || undefined, deadline, 10, what);
  return watched;
}
