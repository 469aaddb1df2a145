import { jest } from '@jest/globals';
import { compileKitNode } from '../support/kit-node.js';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import { currentLock, SchedulerLock } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';

/** The 10 s occurrences start here; the nodes start 100 ms before the first. */
const T0 = Date.parse('2027-01-01T00:00:00Z');

const store = new TestLockProvider();
/** Each running node's app, by node name. */
const open = new Map<string, TestingModule>();
/** Each attempt, as `<occurrence's second> #<attempt>`, in order. */
const attempts: string[] = [];
/** The nodes that ran an attempt. */
const ranOn = new Set<string>();
/** How many attempts fail before one succeeds; every one fails by default. */
let failures = Infinity;

@Injectable()
class Jobs {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('*/10 * * * * *', { name: 'ledger' })
  ledger() {
    const lock = currentLock()!;
    attempts.push(`${(lock.occurrence!.getTime() - T0) / 1_000}s #${lock.recovery?.attempt ?? 1}`);
    ranOn.add(lock.node);
    if (failures-- > 0) throw new Error('boom: the ledger is locked');
  }
}

/** Three nodes of the app on `store`: each `ledger` failure is retried twice, 1 s then 2 s later. */
async function startNodes(pauseAfter?: number): Promise<TestNode[]> {
  return Promise.all(
    ['node-1', 'node-2', 'node-3'].map(async (node) => {
      const options = { retry: { retries: 2, backoff: '1s' }, health: { pauseAfter } };
      const moduleRef = await compileKitNode(store, node, [Jobs], options);
      open.set(node, moduleRef);
      return SchedulerLockTest.node(moduleRef);
    }),
  );
}

beforeEach(() => {
  jest.useFakeTimers({ now: T0 - 100 });
});
afterEach(async () => {
  await Promise.all([...open.values()].map((moduleRef) => moduleRef.close()));
  open.clear();
  jest.useRealTimers();
  store.reset();
  attempts.length = 0;
  ranOn.clear();
  failures = Infinity;
});

describe('retry of a failed occurrence, on three nodes on fake time', () => {
  it('retries an always-failing job twice per occurrence, then the failure policy pauses it', async () => {
    const nodes = await startNodes(3);
    // Occurrences at 0, 10 and 20 s, each with its retries at +1 s and +3 s; a health check every 5 s.
    await jest.advanceTimersByTimeAsync(35_000);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3', '10s #1', '10s #2', '10s #3', '20s #1', '20s #2', '20s #3']);
    const history = await nodes[0].admin.history('ledger');
    const pauses = history.filter((entry) => entry.type === 'pause');
    expect(pauses).toEqual([
      expect.objectContaining({ actor: 'scheduler', reason: '3 failures in a row (health.pauseAfter: 3)' }),
    ]);
    expect(history.filter((entry) => entry.type === 'run').map((run) => run.type === 'run' && run.attempt)).toEqual([
      3, 2, 1, 3, 2, 1, 3, 2, 1,
    ]);
    expect(await nodes[1].admin.getHealth('ledger')).toMatchObject({ state: 'paused', failuresInARow: 3 });
  });

  it('waits the backoff, doubled for the second retry, and stops once an attempt succeeds', async () => {
    await startNodes();
    failures = 2;
    await jest.advanceTimersByTimeAsync(100 + 999);
    expect(attempts).toEqual(['0s #1']);
    await jest.advanceTimersByTimeAsync(100);
    expect(attempts).toEqual(['0s #1', '0s #2']);
    // The second retry waits 2 s after the first one failed.
    await jest.advanceTimersByTimeAsync(1_800);
    expect(attempts).toEqual(['0s #1', '0s #2']);
    await jest.advanceTimersByTimeAsync(300);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3']);
    await jest.advanceTimersByTimeAsync(9_000);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3', '10s #1']);
  });

  it('lets a node that did not run the failed attempt retry it when that node is gone', async () => {
    await startNodes();
    await jest.advanceTimersByTimeAsync(100 + 10);
    expect(attempts).toEqual(['0s #1']);
    const [failedOn] = [...ranOn];
    // The node that ran the failed attempt stops before its retry is due.
    await open.get(failedOn)!.close();
    open.delete(failedOn);
    ranOn.clear();
    await jest.advanceTimersByTimeAsync(3_000);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3']);
    expect(ranOn.has(failedOn)).toBe(false);
  });
});
