import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Sleeps until `performance.now()` reaches `target`. For claims that are about time itself (a TTL
 * running out), where no event exists to wait on.
 */
export async function sleepUntil(target: number): Promise<void> {
  const wait = target - performance.now();
  if (wait > 0) await sleep(Math.ceil(wait));
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
