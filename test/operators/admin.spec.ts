import { jest } from '@jest/globals';
import {
  InMemoryLockProvider,
  LockLostError,
  SchedulerLockAdmin,
  UnknownJobError,
  type HistoryEntry,
} from '../../lib/index.js';
import type { RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { ClusterAdmin } from '../../lib/provider/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, type SchedulerApp } from '../support/scheduler-app.js';
import { LongRun, operatorJobs } from './operator-jobs.js';
import { InMemoryStore } from '../../lib/providers/in-memory/in-memory-store.js';
import { pollUntil } from '../../lib/provider-tests/timing.js';
import { fakeKitClock, runClockUntil } from '../support/fake-clock.js';

const Jobs = operatorJobs(300);

/** The store the nodes of a test share: the admin's logic across nodes, on a store the kit checks. */
let store: InMemoryStore;
// On fake time: the admin's logic across nodes is the subject, not time.
beforeEach(() => {
  jest.useFakeTimers();
  store = new InMemoryStore();
});
afterEach(async () => {
  await runClockUntil(closeSchedulerApps());
  jest.useRealTimers();
});

/** The operator store of the test's cluster, as a node sees it. */
const operatorProvider = () => new InMemoryLockProvider({ node: 'operator', store }).operatorProvider();

/** Two nodes of one app, publishing themselves every 100 ms. */
async function cluster(...providers: (typeof Jobs | typeof LongRun)[]): Promise<[SchedulerApp, SchedulerApp]> {
  return [await startNode('node-a', providers), await startNode('node-b', providers)];
}

/** A node of the app: `providers` are its jobs (none for a node that only looks and steers). */
function startNode(node: string, providers: (typeof Jobs | typeof LongRun)[]): Promise<SchedulerApp> {
  return startSchedulerApp({
    lock: {
      provider: new InMemoryLockProvider({ node, store }),
      node,
      defaultLockAtMostFor: '1m',
      heartbeatInterval: '100ms',
    },
    providers,
  });
}

/** What `probe` resolves to once `accept` takes it, looked at every 50 ms of fake time for up to 10 s. */
async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
  const accepted = async () => {
    const value = await probe();
    return accept(value) ? value : undefined;
  };
  const clock = fakeKitClock();
  return (await pollUntil(clock, accepted, clock.now() + 10_000, 50)).value;
}

function runs(history: HistoryEntry[]): RunHistoryEntry[] {
  return history.filter((entry): entry is RunHistoryEntry => entry.type === 'run');
}

describe('SchedulerLockAdmin: the cluster seen and steered from any node', () => {
  it('lists the live nodes and their jobs; each run goes into the history with its node, outcome, token and error', async () => {
    const [a] = await cluster(Jobs);
    const admin = a.get(SchedulerLockAdmin);

    const nodes = await until(
      () => admin.listNodes(),
      (found) => found.length === 2,
    );
    expect(nodes.map((node) => node.node)).toEqual(['node-a', 'node-b']);
    expect(nodes[0].jobs).toEqual(expect.arrayContaining(['report', 'failing', 'leap-day']));

    const failed = await until(
      () => admin.history('failing', 10),
      (history) => runs(history).some((run) => run.outcome === 'failed'),
    );
    const run = runs(failed).find((entry) => entry.outcome === 'failed')!;
    expect(run).toMatchObject({ error: 'boom: the ledger is locked', attempt: 1 });
    expect(['node-a', 'node-b']).toContain(run.node);
    expect(run.fencingToken).toBeGreaterThan(0);
    expect(run.finishedAt!.getTime()).toBeGreaterThanOrEqual(run.startedAt.getTime());

    const jobs = await until(
      () => admin.listJobs(),
      (list) => list.find((job) => job.jobName === 'report')?.lastRun !== null,
    );
    const report = jobs.find((job) => job.jobName === 'report')!;
    expect(report).toMatchObject({
      kind: 'interval',
      schedule: 'every 300 ms',
      paused: false,
      nodes: ['node-a', 'node-b'],
    });
    expect(report.lastRun).toMatchObject({ outcome: 'succeeded' });
    expect(jobs.find((job) => job.jobName === 'leap-day')).toMatchObject({ schedule: '0 0 0 29 2 *', lastRun: null });
    await expect(admin.getJob('no-such-job')).rejects.toBeInstanceOf(UnknownJobError);
  });

  it('pause: every node skips the ticks with reason paused until resume; both are in the history and emitted', async () => {
    const [a, b] = await cluster(Jobs);
    const admin = a.get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 2,
    );
    const operatorEvent = nextEvent(a.events$, (event) => event.type === 'operator');

    expect(await admin.pause('report', { actor: 'alice', reason: 'ledger maintenance' })).toBe(true);
    expect(await runClockUntil(operatorEvent)).toMatchObject({
      action: 'pause',
      jobName: 'report',
      lockName: 'report',
      actor: 'alice',
    });
    const pausedSkips = (app: SchedulerApp) =>
      events(
        app.events$,
        (event) => event.type === 'skipped' && event.jobName === 'report' && event.reason === 'paused',
        2,
      );
    await runClockUntil(Promise.all([pausedSkips(a), pausedSkips(b)]));
    expect(await admin.getJob('report')).toMatchObject({
      paused: true,
      pause: { actor: 'alice', reason: 'ledger maintenance' },
    });
    // A run that had its lock before the pause may still end; none starts after the first paused skip.
    const startedSince = (app: SchedulerApp, from: number) =>
      app.recorded.slice(from).filter((event) => event.type === 'started' && event.jobName === 'report');
    const [fromA, fromB] = [a.recorded.length, b.recorded.length];
    await runClockUntil(events(a.events$, (event) => event.type === 'skipped' && event.reason === 'paused', 2));
    expect([...startedSince(a, fromA), ...startedSince(b, fromB)]).toEqual([]);

    const started = Promise.race([a, b].map((app) => nextEvent(app.events$, jobEvent('started', 'report'))));
    expect(await admin.resume('report', { actor: 'alice' })).toBe(true);
    await runClockUntil(started);
    const history = await admin.history('report', 50);
    expect(history.filter((entry) => entry.type !== 'run')).toMatchObject([
      { type: 'resume', actor: 'alice' },
      { type: 'pause', actor: 'alice', reason: 'ledger maintenance' },
    ]);
    const skips = await until(
      () => admin.getJob('report'),
      (job) => (job.skips.paused ?? 0) >= 4,
    );
    expect(skips.skips.paused).toBeGreaterThanOrEqual(4);
  });

  it('trigger, from a node without the job: runs a job with no tick due once, on one node that has it, as a manual run', async () => {
    const [a, b] = await cluster(Jobs);
    const admin = (await startNode('observer', [])).get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 3,
    );
    const startedOn = Promise.race([
      nextEvent(a.events$, jobEvent('started', 'leap-day')).then(() => 'node-a'),
      nextEvent(b.events$, jobEvent('started', 'leap-day')).then(() => 'node-b'),
    ]);

    const outcome = await runClockUntil(admin.trigger('leap-day', { actor: 'bob', reason: 'rerun after the fix' }));
    expect(outcome).toMatchObject({ triggered: true, result: { state: 'started' } });
    const node = await runClockUntil(startedOn);
    const history = await until(
      () => admin.history('leap-day'),
      (entries) => runs(entries).length === 1,
    );
    expect(runs(history)[0]).toMatchObject({ outcome: 'succeeded', node, manual: { actor: 'bob' } });
    expect(history.find((entry) => entry.type === 'trigger')).toMatchObject({ actor: 'bob' });
    const startedRuns = [...a.recorded, ...b.recorded].filter(
      (event) => event.type === 'started' && event.jobName === 'leap-day',
    );
    expect(startedRuns).toHaveLength(1);
  });

  it('50 concurrent triggers of one job give one run, and every answer says truly whether it ran', async () => {
    const [a, b] = await cluster(Jobs);
    const admin = a.get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 2,
    );
    const outcomes = await runClockUntil(
      Promise.all(Array.from({ length: 50 }, (_, index) => admin.trigger('leap-day', { actor: `operator-${index}` }))),
    );

    const started = outcomes.filter((outcome) => outcome.triggered);
    expect(started).toHaveLength(1);
    const [winner] = started;
    expect(winner.result).toMatchObject({ state: 'started' });
    // Every other answer is a refusal that names the trigger that runs: none claims a run of its own.
    for (const outcome of outcomes.filter((answer) => !answer.triggered)) {
      expect(outcome).toMatchObject({ triggered: false, reason: 'pending', id: winner.id });
    }
    // Every answer is in, so no trigger is left pending: the one run is all there will be.
    expect(await operatorProvider().takeTriggers(new Set(['leap-day']))).toEqual([]);
    const history = await until(
      () => admin.history('leap-day'),
      (entries) => runs(entries).length > 0,
    );
    expect(runs(history)).toEqual([expect.objectContaining({ node: winner.result.node })]);
    expect(runs(history)[0].manual?.triggerId).toBe(winner.id);
    expect(history.filter((entry) => entry.type === 'trigger')).toHaveLength(1);
    const startedRuns = [...a.recorded, ...b.recorded].filter(
      (event) => event.type === 'started' && event.jobName === 'leap-day',
    );
    expect(startedRuns).toHaveLength(1);
  });

  it('trigger: withdrawn when no node takes it in time, so it cannot run after the operator was told it did not', async () => {
    // A job a live node publishes but whose triggers nobody takes (no app runs it).
    const ghostStore = operatorProvider();
    const node = {
      node: 'silent-node',
      version: '1',
      startedAt: new Date(),
      lastSeen: new Date(),
      jobs: ['ghost'],
      elections: [],
    };
    const ghost = {
      jobName: 'ghost',
      lockName: 'ghost',
      kind: 'interval',
      schedule: '1000',
      occurrence: false,
      timeZone: null,
      lease: null,
    } as const;
    await ghostStore.publish(node, [{ ...ghost, lockAtMostFor: 60_000, lockAtLeastFor: 0 }], new Map(), {
      lease: 1,
      unhealthy: {},
    });
    const admin = new ClusterAdmin(ghostStore, 60_000);

    const outcome = await runClockUntil(admin.trigger('ghost', { actor: 'bob' }, 300));
    expect(outcome).toEqual({ triggered: false, reason: 'not-taken', id: expect.any(String) });
    expect(await ghostStore.takeTriggers(new Set(['ghost']))).toEqual([]);
    // The next trigger is queued afresh, not refused as pending behind the withdrawn one.
    expect(await runClockUntil(admin.trigger('ghost', { actor: 'carol' }, 300))).toMatchObject({ reason: 'not-taken' });
  });

  it('unlock of a free lock releases nothing, says so (formerNode null) and writes no history entry', async () => {
    const [a] = await cluster(Jobs);
    const admin = a.get(SchedulerLockAdmin);
    await until(
      () => admin.listJobs(),
      (jobs) => jobs.some((job) => job.jobName === 'leap-day'),
    );

    expect(await admin.unlock('leap-day', { actor: 'carol', reason: 'just in case' })).toEqual({ formerNode: null });
    expect((await admin.history('leap-day')).filter((entry) => entry.type === 'unlock')).toEqual([]);
  });

  it('trigger is refused while a run holds the lock; unlock frees it and the run sees its lock lost (not-owner)', async () => {
    const [a, b] = await cluster(LongRun);
    const admin = a.get(SchedulerLockAdmin);
    const longRuns = [a.get(LongRun), b.get(LongRun)];
    await runClockUntil(Promise.race(longRuns.map((job) => job.started.promise)));
    // Each node's one tick has come (one runs, the other is skipped): no late first tick takes the freed lock.
    const ticked = (app: SchedulerApp) =>
      nextEvent(app.history$, (event) => event.jobName === 'long-run' && ['started', 'skipped'].includes(event.type));
    await runClockUntil(Promise.all([a, b].map(ticked)));
    await until(
      () => admin.listNodes(),
      (found) => found.length === 2,
    );
    const holder = (await admin.getJob('long-run')).holdingNode;
    expect(['node-a', 'node-b']).toContain(holder);

    expect(await runClockUntil(admin.trigger('long-run', { actor: 'bob' }))).toEqual({
      triggered: false,
      reason: 'running',
      holdingNode: holder,
    });
    expect(await admin.unlock('long-run', { actor: 'carol', reason: 'stuck' })).toEqual({ formerNode: holder });
    const reason = await runClockUntil(Promise.race(longRuns.map((job) => job.lost.promise)));
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason).toMatchObject({ reason: 'not-owner' });
    expect((await admin.getJob('long-run')).holdingNode).toBeNull();
    const history = await admin.history('long-run');
    expect(history.find((entry) => entry.type === 'unlock')).toMatchObject({ actor: 'carol', reason: 'stuck' });
  });
});
