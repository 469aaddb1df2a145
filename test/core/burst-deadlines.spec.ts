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

  it("grows an attempt's deadline no further than its bound, and never below the timeout", async () => {
    const deadlines = new AttemptDeadlines(2_000);
    const bounded = Array.from({ length: 1_000 }, () =>
      deadlines.within(new Promise<never>(() => undefined), () => undefined, 3_000),
    );
    const below = deadlines.within(new Promise<never>(() => undefined), () => undefined, 500);
    const failures = [...bounded, below].map((attempt) => attempt.catch((error: Error) => error.message));
    const settled: (string | undefined)[] = [];
    failures.forEach((failure, i) => void failure.then((message) => (settled[i] = message)));
    await jest.advanceTimersByTimeAsync(1_900);
    expect(settled.filter(Boolean)).toHaveLength(0);
    await jest.advanceTimersByTimeAsync(600);
    expect(settled[1_000]).toContain('within 2000 ms');
    expect(settled.filter(Boolean)).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(1_100);
    expect(settled.filter(Boolean)).toHaveLength(1_001);
    expect(settled[0]).toContain('within 3000 ms');
  });

  it('keeps the deadline of a burst of short locks within half their lockAtMostFor', async () => {
    const gated = new GatedLockProvider(new TestLockProvider().provider('node-a'));
    const executor = new LockingTaskExecutor(gated, {
      node: 'node-a',
      acquireTimeout: 1_000,
      logger: new CapturedLogger(),
    });
    const short = (name: string) => ({ ...lockOf(name), lockAtMostFor: 2_000 });
    const runs = Array.from({ length: 300 }, (_, i) => executor.executeWithLock(jest.fn(), short(`job-${i}`)));
    // 1.5 s for a burst of 300, but a lock that arrived then would have a quarter of its 2 s left.
    await jest.advanceTimersByTimeAsync(1_300);
    const results = await Promise.all(runs);
    const errors = results.map((result) => (!result.executed && 'error' in result ? String(result.error) : ''));
    expect(errors.every((error) => error.includes('within 1000 ms'))).toBe(true);
    gated.open();
    await executor.shutdown(0);
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
