import { jest } from '@jest/globals';

/**
 * Runs Jest's fake clock `stepMs` at a time until `promise` settles, and settles like it: for a result that
 * timers and promises reach together (a run, an app's close). Rejects once `limitMs` of fake time passed.
 */
export async function runClockUntil<T>(promise: Promise<T>, stepMs = 10, limitMs = 3_600_000): Promise<T> {
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined); // awaited below; a rejection before then is not unhandled
  for (let ran = 0; !settled; ran += stepMs) {
    if (ran >= limitMs) throw new Error(`Not settled after ${limitMs} ms of fake time`);
    await jest.advanceTimersByTimeAsync(stepMs);
  }
  return watched;
}
