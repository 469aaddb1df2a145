import { jest } from '@jest/globals';
import { TestLockProvider } from '../../lib/testing/index.js';
import { waitUntil } from '../support/wait-until.js';
import { closeNodes, crashedRun, NEW_YEAR, startNodes } from './cluster-kit.js';

const store = new TestLockProvider();
afterEach(async () => {
  jest.useRealTimers();
  await closeNodes();
  store.reset();
});

/** Fake timers, then nodes: their @Interval and @Timeout jobs get fake timers too. */
function startNodesOnFakeTimers(count: number) {
  jest.useFakeTimers({ now: NEW_YEAR.getTime() + 1_000 });
  return startNodes(store, count);
}

describe('time under fake timers', () => {
  it('a 10-minute lockAtMostFor runs out in milliseconds: the run sees its lock expire', async () => {
    const [node] = await startNodesOnFakeTimers(1);
    let settled = false;
    const running = node.tick('long').finally(() => (settled = true));
    await jest.advanceTimersByTimeAsync(9 * 60_000);
    expect(settled).toBe(false); // not before its lockAtMostFor
    await jest.advanceTimersByTimeAsync(60_000);
    expect(await running).toMatchObject({ status: 'ran', lost: 'expired' });
  });

  it('lockAtLeastFor keeps the lock for 5 fake minutes after a short run', async () => {
    const [a, b] = await startNodesOnFakeTimers(2);
    expect(await a.tick('sweep')).toMatchObject({ status: 'ran' });
    await jest.advanceTimersByTimeAsync(4 * 60_000 + 59_000);
    expect(await b.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked' });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await b.tick('sweep')).toMatchObject({ status: 'ran', node: 'node-2' });
  });

  it('a tick claims the occurrence its fake clock has reached', async () => {
    const [node] = await startNodesOnFakeTimers(1);
    expect(await node.tick('yearly')).toMatchObject({ status: 'ran', occurrence: NEW_YEAR });
    jest.setSystemTime(new Date('2028-01-01T00:00:02Z'));
    expect(await node.tick('yearly')).toMatchObject({ status: 'ran', occurrence: new Date('2028-01-01T00:00:00Z') });
    expect((await store.runs('yearly')).map((run) => run.occurrence)).toEqual([
      NEW_YEAR,
      new Date('2028-01-01T00:00:00Z'),
    ]);
  });

  it('a node re-runs an occurrence whose node died once the recovery grace has passed on the fake clock', async () => {
    const [a, b] = await startNodesOnFakeTimers(2);
    const crashed = a.tick('rerun'); // node-1 claims the occurrence and never ends its run
    expect(await b.tick('rerun')).toMatchObject({ status: 'skipped', reason: 'already-ran' }); // node-2 watches it
    store.expire('rerun'); // node-1's lease is gone, as when its process dies
    await jest.advanceTimersByTimeAsync(4_000);
    expect(await store.runs('rerun')).toEqual([]); // within the 5 s recovery grace: nobody re-ran it
    await jest.advanceTimersByTimeAsync(3_000);
    const summary = async () =>
      (await store.runs('rerun')).map(({ node, attempt, outcome }) => `${node} #${attempt} ${outcome}`);
    // The recovery records node-1's attempt as crashed, and node-2 runs the occurrence again.
    expect(await summary()).toEqual(['node-1 #1 crashed', 'node-2 #2 succeeded']);
    // "Ran once" counts every attempt that started: this occurrence's handler ran twice.
    await expect(store.expectRanOnce('rerun', NEW_YEAR)).rejects.toThrow('but it ran 2 times');
    crashedRun.release();
    expect(await crashed).toMatchObject({ status: 'ran', node: 'node-1', lost: 'expired' });
    expect(await summary()).toEqual(['node-1 #1 crashed', 'node-2 #2 succeeded', 'node-1 #1 lost']);
  });

  it('a held lock expires on the fake clock', async () => {
    const [node] = await startNodesOnFakeTimers(1);
    await store.hold('sweep', { for: '10m' });
    expect(await node.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked' });
    await jest.advanceTimersByTimeAsync(10 * 60_000);
    expect(await node.tick('sweep')).toMatchObject({ status: 'ran' });
  });
});

describe('a clean slate: reset()', () => {
  it('forgets locks, occurrences, history and pauses', async () => {
    const [node] = await startNodes(store, 1);
    await node.tick('yearly', { at: NEW_YEAR });
    await store.hold('sweep');
    await node.admin.pause('warm-up', { actor: 'test' });
    store.reset();
    expect(await store.runs('yearly')).toEqual([]);
    expect(await node.tick('yearly', { at: NEW_YEAR })).toMatchObject({ status: 'ran', fencingToken: 1 });
    expect(await node.tick('sweep')).toMatchObject({ status: 'ran' });
    expect(await node.tick('warm-up')).toMatchObject({ status: 'ran' });
    // The nodes and their jobs stay known to the console.
    expect((await node.admin.listJobs()).map((job) => job.jobName)).toContain('yearly');
  });

  it('without it, the last test would still hold the lock', async () => {
    const [node] = await startNodes(store, 1);
    await store.hold('sweep');
    expect(await node.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked' });
  });
});

describe('the console on the test store', () => {
  it('a paused job is skipped on every node until resumed; history shows it', async () => {
    const [a, b] = await startNodes(store, 2);
    expect(await a.admin.pause('yearly', { actor: 'test', reason: 'maintenance' })).toBe(true);
    expect(await b.tick('yearly', { at: NEW_YEAR })).toMatchObject({ status: 'skipped', reason: 'paused' });
    await a.admin.resume('yearly', { actor: 'test' });
    expect(await b.tick('yearly', { at: NEW_YEAR })).toMatchObject({ status: 'ran', node: 'node-2' });
    const history = await a.admin.history('yearly');
    expect(history.map((entry) => entry.type)).toEqual(['run', 'resume', 'pause']);
  });

  it('a trigger runs the job once on one node, recorded as a manual run', async () => {
    const [a] = await startNodes(store, 2);
    const outcome = await a.admin.trigger('warm-up', { actor: 'test' });
    expect(outcome).toMatchObject({ triggered: true, result: { state: 'started' } });
    await waitUntil(async () => (await store.runs('warm-up')).length > 0, 'the triggered run ended');
    const run = await store.expectRanOnce('warm-up');
    expect(run.manual).toEqual({ actor: 'test' });
  });
});
