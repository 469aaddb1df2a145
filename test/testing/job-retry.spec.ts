import { jest } from '@jest/globals';
import { compileKitNode } from '../support/kit-node.js';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import { currentLock, SchedulerLock } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';

/** The 2 s occurrences start here; the nodes start 100 ms before the first. */
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
  @Cron('*/2 * * * * *', { name: 'ledger' })
  ledger() {
    const lock = currentLock()!;
    attempts.push(`${(lock.occurrence!.getTime() - T0) / 1_000}s #${lock.recovery?.attempt ?? 1}`);
    ranOn.add(lock.node);
    if (failures-- > 0) throw new Error('boom: the ledger is locked');
  }
}

/**
 * Three nodes of the app on `store`: each `ledger` failure is retried twice, 200 ms then 400 ms later; each node
 * checks health every second.
 */
async function startNodes(pauseAfter?: number): Promise<TestNode[]> {
  return Promise.all(
    ['node-1', 'node-2', 'node-3'].map(async (node) => {
      const options = { retry: { retries: 2, backoff: '200ms' }, heartbeatInterval: '1s', health: { pauseAfter } };
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
    // Occurrences at 0, 2 and 4 s, each with its retries 200 and 600 ms later; then 6 s is paused.
    await jest.advanceTimersByTimeAsync(100 + 6_500);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3', '2s #1', '2s #2', '2s #3', '4s #1', '4s #2', '4s #3']);
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
    await jest.advanceTimersByTimeAsync(100 + 199);
    expect(attempts).toEqual(['0s #1']);
    await jest.advanceTimersByTimeAsync(2);
    expect(attempts).toEqual(['0s #1', '0s #2']);
    // The second retry waits 400 ms after the first one failed.
    await jest.advanceTimersByTimeAsync(397);
    expect(attempts).toEqual(['0s #1', '0s #2']);
    await jest.advanceTimersByTimeAsync(2);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3']);
    await jest.advanceTimersByTimeAsync(1_500);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3', '2s #1']);
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
    await jest.advanceTimersByTimeAsync(1_000);
    expect(attempts).toEqual(['0s #1', '0s #2', '0s #3']);
    expect(ranOn.has(failedOn)).toBe(false);
  });
});
