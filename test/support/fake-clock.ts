import { jest } from '@jest/globals';
import type { KitClock } from '../../lib/provider-tests/provider-subject.js';

/** Whether Jest's fake timers are installed now: sinon's fake `setTimeout` carries its clock. */
export function onFakeTimers(): boolean {
  return 'clock' in setTimeout;
}

/**
 * Runs Jest's fake clock `stepMs` at a time until `promise` settles, and settles like it: for a result that
 * timers and promises reach together (a run, an app's close). Rejects once `limitMs` of fake time passed.
 * On real timers it only waits for `promise`.
 */
export async function runClockUntil<T>(promise: Promise<T>, stepMs = 10, limitMs = 3_600_000): Promise<T> {
  if (!onFakeTimers()) return promise;
  let settled = false;
  const watched = promise.finally(() => (settled = true));
  watched.catch(() => undefined); // awaited below; a rejection before then is not unhandled
  for (let ran = 0; !settled; ran += stepMs) {
    if (ran >= limitMs) throw new Error(`Not settled after ${limitMs} ms of fake time`);
    await jest.advanceTimersByTimeAsync(stepMs);
  }
  return watched;
}

/**
 * The conformance kit's clock on Jest's fake timers: `now()` reads the fake `performance.now()`, and `sleep()`
 * advances the fake clock for one caller at a time, since overlapping advances could set it back.
 */
export function fakeKitClock(): KitClock {
  let advancing: Promise<unknown> = Promise.resolve();
  return {
    now: () => performance.now(),
    sleep(ms) {
      const advance = advancing.then(() => jest.advanceTimersByTimeAsync(ms));
      advancing = advance.catch(() => undefined);
      return advance;
    },
  };
}
