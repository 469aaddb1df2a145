import { jest } from '@jest/globals';
import { currentLock, LockingTaskExecutor, LockLostError, type LockEvent } from '../../lib/index.js';
import { isLocked } from '../../lib/provider-tests/lock-probes.js';
import { nextEvent } from '../support/lock-events.js';
import { OutageProvider } from '../support/lock-provider-doubles.js';
import { aborted, memoryExecutor, memoryExecutorOnFakeTime, ttlOf } from '../support/memory-executor.js';

const LEASE = 300;
/** For runs whose lock is taken from them: the first renewal, a third of it in, finds the loss. */
const LOSS_LEASE = 3_000;

describe('keepAlive lease, on fake time', () => {
  const node = memoryExecutorOnFakeTime();

  it('keeps the lock of a run lasting 3 leases, and no other node can take it meanwhile', async () => {
    const rival = node().store.provider('node-b');
    const renewals: LockEvent[] = [];
    const subscription = node().events.events$.subscribe((event) => event.type === 'extended' && renewals.push(event));
    const rivalAttempts: Array<boolean> = [];

    const result = await node().executor.executeWithLock(
      async () => {
        const deadline = performance.now() + 3 * LEASE;
        while (performance.now() < deadline) {
          const stolen = await rival.lock({ name: 'report', lockAtMostFor: 10_000, lockAtLeastFor: 0 });
          rivalAttempts.push(stolen !== undefined);
          await jest.advanceTimersByTimeAsync(LEASE / 4);
        }
        return currentLock()!.signal.aborted;
      },
      { name: 'report', lockAtMostFor: '1m', keepAlive: { lease: LEASE } },
    );
    subscription.unsubscribe();

    expect(result).toEqual({ executed: true, result: false });
    expect(rivalAttempts.length).toBeGreaterThanOrEqual(8);
    expect(rivalAttempts).not.toContain(true);
    expect(renewals.length).toBeGreaterThanOrEqual(5); // every LEASE/3
    expect(await isLocked(rival, 'report')).toBe(false); // released at the end
  });

  it('takes the lock for one lease only, so a crashed holder blocks the job for one lease', async () => {
    let ttl: number | undefined;
    await node().executor.executeWithLock(
      async () => {
        ttl = await ttlOf(node(), 'report');
      },
      { name: 'report', lockAtMostFor: '1h', keepAlive: { lease: LEASE } },
    );
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(LEASE);
  });

  it('never renews past lockAtMostFor: the signal aborts (reason expired) before the cap', async () => {
    const lease = 3_000;
    const margin = lease / 10; // the abort comes a tenth of the lease before the cap
    const started = performance.now();
    const run = node().executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        await aborted(signal);
        return { at: performance.now() - started, reason: (signal.reason as LockLostError).reason };
      },
      { name: 'capped', lockAtMostFor: 2 * lease, keepAlive: { lease } },
    );
    await jest.advanceTimersByTimeAsync(2 * lease);
    const result = await run;
    expect(result.executed && result.result.reason).toBe('expired');
    const abortedAt = result.executed ? result.result.at : NaN;
    expect(abortedAt).toBeGreaterThanOrEqual(2 * lease - margin);
    expect(abortedAt).toBeLessThan(2 * lease);
  });

  it('aborts the signal with reason when the lock expires mid-run, emits lost, and does not crash', async () => {
    const lost = nextEvent(node().events.events$, (event) => event.type === 'lost');
    const releaseFailed = nextEvent(node().events.events$, (event) => event.type === 'release-failed');
    const run = node().executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        node().store.expire('report');
        await aborted(signal);
        return signal.reason;
      },
      { name: 'report', lockAtMostFor: '1m', keepAlive: { lease: LOSS_LEASE } },
    );
    await jest.advanceTimersByTimeAsync(LOSS_LEASE);
    const result = await run;
    expect(result.executed && result.result).toBeInstanceOf(LockLostError);
    expect(result.executed && (result.result as LockLostError).reason).toBe('expired');
    expect(await lost).toMatchObject({ type: 'lost', lockName: 'report', reason: 'expired' });
    expect(await releaseFailed).toMatchObject({ reason: 'expired' });
  });

  it('aborts with reason not-owner when another owner took the lock over', async () => {
    const run = node().executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        await node().store.lose('report', { as: 'someone-else' });
        await aborted(signal);
        return (signal.reason as LockLostError).reason;
      },
      { name: 'report', lockAtMostFor: '1m', keepAlive: { lease: LOSS_LEASE } },
    );
    await jest.advanceTimersByTimeAsync(LOSS_LEASE);
    expect(await run).toEqual({ executed: true, result: 'not-owner' });
  });

  it('renews every held lease in one call per interval, whatever the number of locks', async () => {
    const renewCalls: number[] = [];
    const counting = node().store.provider('node-a');
    const renewLeases = counting.renewLeases.bind(counting);
    counting.renewLeases = (renewals) => {
      renewCalls.push(renewals.length);
      return renewLeases(renewals);
    };
    const countingNode = new LockingTaskExecutor(counting, { node: 'node-a' });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runs = Array.from({ length: 100 }, (_, i) =>
      countingNode.executeWithLock(() => gate, { name: `item-${i}`, lockAtMostFor: '1m', keepAlive: { lease: LEASE } }),
    );
    await jest.advanceTimersByTimeAsync(3 * LEASE);
    release();
    const results = await Promise.all(runs);
    await countingNode.shutdown(0);

    expect(results.every((result) => result.executed)).toBe(true);
    // ~9 intervals of LEASE/3 in 3 leases: one call each, each carrying all 100 leases.
    expect(renewCalls.length).toBeGreaterThanOrEqual(6);
    expect(renewCalls.length).toBeLessThanOrEqual(12);
    expect(Math.max(...renewCalls)).toBe(100);
  });
});

describe('keepAlive when the store goes away', () => {
  afterEach(() => jest.useRealTimers());

  it('aborts the signal no later than the lease deadline, stays up, and locks normally once the store is back', async () => {
    jest.useFakeTimers();
    let store!: OutageProvider;
    const node = memoryExecutor((provider) => (store = new OutageProvider(provider)));
    try {
      const run = node.executor.executeWithLock(
        async () => {
          const { signal, lockedAt } = currentLock()!;
          await jest.advanceTimersByTimeAsync(LEASE / 2); // past a renewal: the lease runs from there
          store.down = true;
          const downAt = Date.now();
          await aborted(signal);
          const abortedAt = Date.now();
          return { reason: (signal.reason as LockLostError).reason, lockedAt: lockedAt.getTime(), downAt, abortedAt };
        },
        { name: 'job', lockAtMostFor: '1m', keepAlive: { lease: LEASE } },
      );
      await jest.advanceTimersByTimeAsync(2 * LEASE);
      const result = await run;
      expect(result.executed).toBe(true);
      const { reason, lockedAt, downAt, abortedAt } = result.executed ? result.result : ({} as never);
      expect(reason).toBe('lease-expired');
      // The lease ran from the last renewal (at most LEASE before the outage); the node aborts before it ends.
      expect(abortedAt).toBeLessThanOrEqual(downAt + LEASE);
      expect(abortedAt).toBeGreaterThan(lockedAt);

      const skipped = await node.executor.executeWithLock(() => 'ran', { name: 'job' });
      expect(skipped).toMatchObject({ executed: false, reason: 'provider-error' });

      store.down = false;
      expect(await node.executor.executeWithLock(() => 'ran', { name: 'other' })).toEqual({
        executed: true,
        result: 'ran',
      });
    } finally {
      await node.executor.shutdown(0);
    }
  });
});
