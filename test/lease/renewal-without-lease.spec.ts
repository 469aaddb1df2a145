import { jest } from '@jest/globals';
import type { LockEvent } from '../../lib/index.js';
import type { LeaseRenewal } from '../../lib/core/provider/lock-provider.js';
import type { InMemoryLockProvider } from '../../lib/providers/in-memory/in-memory-lock-provider.js';
import { nextEvent } from '../support/lock-events.js';
import { memoryExecutor, type MemoryExecutor } from '../support/memory-executor.js';

const LEASE = 300;

/**
 * Only `keepAlive` locks have a lease. The lease keeper still tracks the other running locks (to abort
 * their signal before `lockAtMostFor`), and must never send them to `renewLeases`: they have no TTL to
 * renew with (Redis answers `ERR value is not an integer` for the NaN). On fake time.
 */
describe('the lease keeper with only non-keepAlive locks held', () => {
  let node: MemoryExecutor;
  let renewed: LeaseRenewal[][];

  beforeEach(() => {
    jest.useFakeTimers();
    renewed = [];
    node = memoryExecutor((provider: InMemoryLockProvider) => {
      const renewLeases = provider.renewLeases.bind(provider);
      provider.renewLeases = (renewals) => {
        renewed.push([...renewals]);
        return renewLeases(renewals);
      };
      return provider;
    });
  });

  afterEach(async () => {
    await node.executor.shutdown(0);
    jest.useRealTimers();
  });

  it("renews nothing while a plain lock runs past a released keepAlive lock's renewal time", async () => {
    // The keepAlive run ends before its first renewal is due, leaving the keeper's wake-up set for it.
    await node.executor.executeWithLock(() => undefined, {
      name: 'leased',
      lockAtMostFor: '1m',
      keepAlive: { lease: LEASE },
    });
    const plainLost = nextEvent(
      node.events.events$,
      (event: LockEvent) => event.type === 'lost' && event.lockName === 'plain',
    );
    let endPlainRun!: () => void;
    // Held until the keeper has aborted it shortly before its lockAtMostFor.
    const plainRun = node.executor.executeWithLock(() => new Promise<void>((resolve) => (endPlainRun = resolve)), {
      name: 'plain',
      lockAtMostFor: 3 * LEASE,
    });
    await jest.advanceTimersByTimeAsync(3 * LEASE);

    const lost = await plainLost;
    endPlainRun();
    await plainRun;

    expect(lost).toMatchObject({ type: 'lost', reason: 'expired' });
    expect(renewed).toEqual([]);
  });
});
