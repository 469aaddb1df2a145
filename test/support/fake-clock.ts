import { jest } from '@jest/globals';
import type { KitClock } from '../../lib/provider-tests/provider-subject.js';
import { awaitUntil } from '../../lib/provider-tests/timing.js';

/** Whether Jest's fake timers are installed now: sinon's fake `setTimeout` carries its clock. */
export function onFakeTimers(): boolean {
  return 'clock' in setTimeout;
}

/**
 * Runs Jest's fake clock until `promise` settles, and settles like it: for a result that timers and promises
 * reach together (a run, an app's close). Rejects once an hour of fake time passed. On real timers it only waits.
 */
export function runClockUntil<T>(promise: Promise<T>): Promise<T> {
  if (!onFakeTimers()) return promise;
  const clock = fakeKitClock();
  return awaitUntil(clock, promise, clock.now() + 3_600_000, 'settled within an hour of fake time');
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
