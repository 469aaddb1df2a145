import { LockEvents, LockingTaskExecutor, LockLostError, currentLock, type LockEvent } from '../../lib/index.js';
import { nextEvent } from '../support/lock-events.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { openRedis } from '../support/redis-client-choice.js';
import { useRedisExecutor } from '../support/redis-executor.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const LEASE = 300;
/**
 * For runs whose lock is taken from them: the first renewal (a third of it in) must find the loss before the
 * node's own lease deadline passes, which a 300 ms lease missed on a loaded CI runner (`lease-expired`).
 */
const LOSS_LEASE = 3_000;

describe('keepAlive lease on Redis', () => {
  const node = useRedisExecutor('lease');

  it('keeps the lock of a run lasting 3 leases, and no other node can take it meanwhile', async () => {
    const rival = new RedisLockProvider(node.client, { keyPrefix: node.prefix, node: 'node-b' });
    const renewals: LockEvent[] = [];
    const subscription = node.events.events$.subscribe((event) => event.type === 'extended' && renewals.push(event));
    const rivalAttempts: Array<boolean> = [];

    const result = await node.executor.executeWithLock(
      async () => {
        const deadline = performance.now() + 3 * LEASE;
        while (performance.now() < deadline) {
          const stolen = await rival.lock({ name: 'report', lockAtMostFor: 10_000, lockAtLeastFor: 0 });
          rivalAttempts.push(stolen !== undefined);
          await new Promise((resolve) => setTimeout(resolve, LEASE / 4));
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
    expect(await node.client.exists(node.provider.lockKey('report'))).toBe(0); // released at the end
  });

  it('takes the lock for one lease only, so a crashed holder blocks the job for one lease', async () => {
    await node.executor.executeWithLock(
      async () => {
        const ttl = await node.client.pttl(node.provider.lockKey('report'));
        expect(ttl).toBeGreaterThan(0);
        expect(ttl).toBeLessThanOrEqual(LEASE);
      },
      { name: 'report', lockAtMostFor: '1h', keepAlive: { lease: LEASE } },
    );
  });

  it('never renews past lockAtMostFor: the signal aborts (reason expired) before the cap', async () => {
    // A lease of seconds: the abort comes a tenth of it (300 ms) before the cap, a margin a timer on a busy
    // machine keeps; with LEASE's 30 ms margin a late timer looked like an abort past the cap.
    const lease = 3_000;
    const margin = lease / 10;
    const started = performance.now();
    const result = await node.executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return { at: performance.now() - started, reason: (signal.reason as LockLostError).reason };
      },
      { name: 'capped', lockAtMostFor: 2 * lease, keepAlive: { lease } },
    );
    expect(result.executed && result.result.reason).toBe('expired');
    const abortedAt = result.executed ? result.result.at : NaN;
    expect(abortedAt).toBeGreaterThan(2 * lease - margin - 100);
    expect(abortedAt).toBeLessThan(2 * lease);
  });

  it('aborts the signal with reason when the lock key is deleted mid-run, emits lost, and does not crash', async () => {
    const lost = nextEvent(node.events.events$, (event) => event.type === 'lost');
    const releaseFailed = nextEvent(node.events.events$, (event) => event.type === 'release-failed');
    const result = await node.executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        await node.client.del(node.provider.lockKey('report'));
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return signal.reason;
      },
      { name: 'report', lockAtMostFor: '1m', keepAlive: { lease: LOSS_LEASE } },
    );
    expect(result.executed && result.result).toBeInstanceOf(LockLostError);
    expect(result.executed && (result.result as LockLostError).reason).toBe('expired');
    expect(await lost).toMatchObject({ type: 'lost', lockName: 'report', reason: 'expired' });
    expect(await releaseFailed).toMatchObject({ reason: 'expired' });
  });

  it('aborts with reason not-owner when another owner took the lock over', async () => {
    const result = await node.executor.executeWithLock(
      async () => {
        const { signal } = currentLock()!;
        const key = node.provider.lockKey('report');
        await node.client.set(key, 'someone-else', 'KEEPTTL');
        await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
        return (signal.reason as LockLostError).reason;
      },
      { name: 'report', lockAtMostFor: '1m', keepAlive: { lease: LOSS_LEASE } },
    );
    expect(result).toEqual({ executed: true, result: 'not-owner' });
  });

  it('renews every held lease in one round trip per interval, whatever the number of locks', async () => {
    const renewCalls: number[] = [];
    const counting = new RedisLockProvider(node.client, { keyPrefix: node.prefix });
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
    await new Promise((resolve) => setTimeout(resolve, 3 * LEASE));
    release();
    const results = await Promise.all(runs);
    await countingNode.shutdown(0);

    expect(results.every((result) => result.executed)).toBe(true);
    // ~9 intervals of LEASE/3 in 3 leases: one call each, each carrying (almost) all 100 leases.
    expect(renewCalls.length).toBeGreaterThanOrEqual(6);
    expect(renewCalls.length).toBeLessThanOrEqual(12);
    expect(Math.max(...renewCalls)).toBe(100);
  });
});

describe('keepAlive when Redis goes away', () => {
  const redis = usePrivateRedisServer();

  it('aborts the signal no later than the lease deadline, stays up, and locks normally once Redis is back', async () => {
    const client = openRedis(redis.server.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      retryStrategy: () => 50,
    });
    client.on('error', () => undefined);
    await new Promise<void>((resolve) => client.once('ready', () => resolve()));
    const events = new LockEvents();
    const executor = new LockingTaskExecutor(new RedisLockProvider(client, { keyPrefix: 'outage' }), {
      node: 'node-a',
      events,
    });
    try {
      const result = await executor.executeWithLock(
        async () => {
          const { signal, lockedAt } = currentLock()!;
          await redis.server.kill();
          const killedAt = Date.now();
          await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
          return {
            reason: (signal.reason as LockLostError).reason,
            lockedAt: lockedAt.getTime(),
            killedAt,
            abortedAt: Date.now(),
          };
        },
        { name: 'job', lockAtMostFor: '1m', keepAlive: { lease: LEASE } },
      );
      expect(result.executed).toBe(true);
      const { reason, lockedAt, killedAt, abortedAt } = result.executed ? result.result : ({} as never);
      expect(reason).toBe('lease-expired');
      // The lease in Redis ran from the last renewal (at most LEASE before the kill); the node aborts before it ends.
      expect(abortedAt).toBeLessThanOrEqual(killedAt + LEASE);
      expect(abortedAt).toBeGreaterThan(lockedAt);

      const skipped = await executor.executeWithLock(() => 'ran', { name: 'job' });
      expect(skipped).toMatchObject({ executed: false, reason: 'provider-error' });

      await redis.server.start();
      if (client.status !== 'ready') await new Promise<void>((resolve) => client.once('ready', () => resolve()));
      expect(await executor.executeWithLock(() => 'ran', { name: 'other' })).toEqual({ executed: true, result: 'ran' });
    } finally {
      await executor.shutdown(0);
      client.disconnect();
    }
  });
});
