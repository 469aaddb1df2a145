import { jest } from '@jest/globals';
import { LockingTaskExecutor } from '../../lib/index.js';
import { AttemptDeadlines } from '../../lib/core/executor/attempt-deadlines.js';
import { burstDeadline, MAX_BURST_FACTOR } from '../../lib/core/provider/burst-deadline.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { GatedLockProvider } from '../support/gated-lock-provider.js';

/** `count` attempts that never answer, each noting whether it was rejected and with what. */
function unansweredAttempts(deadlines: AttemptDeadlines, count: number) {
  const failures: (Error | undefined)[] = Array.from({ length: count }, () => undefined);
  for (let i = 0; i < count; i++) {
    deadlines
      .within(new Promise<never>(() => undefined), () => undefined)
      .catch((error: Error) => (failures[i] = error));
  }
  return { rejected: () => failures.filter(Boolean).length, failures };
}

describe('the deadline of a burst', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('is one call’s below 250 calls, grows by half of it per 250 calls, and stops at four times it', () => {
    expect([1, 249, 250, 500, 1_000, 1_499, 1_500, 100_000].map((calls) => burstDeadline(2_000, calls))).toEqual([
      2_000, 2_000, 3_000, 4_000, 6_000, 7_000, 8_000, 8_000,
    ]);
    expect(burstDeadline(2_000, 1e9)).toBe(MAX_BURST_FACTOR * 2_000);
  });

  it('gives a thousand attempts in flight together three times the timeout, and a lone attempt the timeout', async () => {
    const deadlines = new AttemptDeadlines(2_000);
    const burst = unansweredAttempts(deadlines, 1_000);
    await jest.advanceTimersByTimeAsync(2_600);
    expect(burst.rejected()).toBe(0);
    await jest.advanceTimersByTimeAsync(3_300);
    expect(burst.rejected()).toBe(0);
    await jest.advanceTimersByTimeAsync(600);
    expect(burst.rejected()).toBe(1_000);
    expect(burst.failures[0]?.message).toContain('within 6000 ms');

    const lone = unansweredAttempts(deadlines, 1);
    await jest.advanceTimersByTimeAsync(2_600);
    expect(lone.failures[0]?.message).toContain('within 2000 ms');
  });

  it('releases a burst answered after its deadline unused, with one warning for the whole burst', async () => {
    const store = new TestLockProvider();
    const gated = new GatedLockProvider(store.provider('node-a'));
    const logger = new CapturedLogger();
    const executor = new LockingTaskExecutor(gated, { node: 'node-a', acquireTimeout: 1_000, logger });
    const task = jest.fn();
    // 300 attempts in flight together: one and a half times the timeout (1.5 s), noticed within a quarter more.
    const runs = Array.from({ length: 300 }, (_, i) => executor.executeWithLock(task, lockOf(`job-${i}`)));
    await jest.advanceTimersByTimeAsync(1_400);
    expect(task).not.toHaveBeenCalled();
    await jest.advanceTimersByTimeAsync(600);
    const results = await Promise.all(runs);
    expect(results.every((result) => !result.executed && result.reason === 'provider-error')).toBe(true);

    gated.open();
    await jest.advanceTimersByTimeAsync(10);
    expect(logger.texts('warn')).toEqual([
      '300 locks arrived after their attempts timed out ("job-0", "job-1", "job-2" and 297 more); releasing them unused',
    ]);
    const other = store.provider('node-b');
    for (let i = 0; i < 300; i++) expect(await other.lock(lockOf(`job-${i}`))).toBeDefined();
    expect(task).not.toHaveBeenCalled();
    await executor.shutdown(0);
  });
});

/** A lock of one minute at most. */
function lockOf(name: string) {
  return { name, lockAtMostFor: 60_000, lockAtLeastFor: 0 };
}
