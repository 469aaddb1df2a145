import { jest } from '@jest/globals';
import {
  InMemoryLockProvider,
  LockLostError,
  SchedulerLockAdmin,
  UnknownJobError,
  type HistoryEntry,
  type LockEvent,
  type OperatorNote,
} from '../../lib/index.js';
import type { RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { type LockProvider } from '../../lib/provider/index.js';
import { SchedulerLockDashboardModule } from '../../lib/dashboard/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import {
  closeSchedulerApps,
  startSchedulerApp,
  type SchedulerApp,
  type SchedulerAppSetup,
} from '../support/scheduler-app.js';
import { LongRun, operatorJobs } from './operator-jobs.js';
import { pollUntil } from '../../lib/provider-tests/timing.js';
import { fakeKitClock, runClockUntil } from '../support/fake-clock.js';

const Jobs = operatorJobs(200);

/** The provider of each test's app: in memory (the kit checks each store's operator store). */
const newProvider = () => new InMemoryLockProvider({ node: 'node-a' });
// On fake time: the admin and its records are the subject, not time (the page's fetch runs on Node's own timers).
beforeEach(() => jest.useFakeTimers());
afterEach(async () => {
  await runClockUntil(closeSchedulerApps());
  jest.useRealTimers();
});

/** An app on `provider` ({@link newProvider}'s unless given), publishing itself every 100 ms. */
function startApp(
  jobs: (typeof Jobs | typeof LongRun)[],
  provider?: LockProvider,
  http?: Pick<SchedulerAppSetup, 'imports' | 'controllers'>,
): Promise<SchedulerApp> {
  return startSchedulerApp({
    ...http,
    lock: {
      provider: provider ?? newProvider(),
      node: 'node-a',
      defaultLockAtMostFor: '1m',
      heartbeatInterval: '100ms',
    },
    providers: jobs,
  });
}

/** What `probe` resolves to once `accept` takes it, looked at every 20 ms of fake time for up to 10 s. */
async function until<T>(probe: () => Promise<T>, accept: (value: T) => boolean): Promise<T> {
  const accepted = async () => {
    const value = await probe();
    return accept(value) ? value : undefined;
  };
  const clock = fakeKitClock();
  return (await pollUntil(clock, accepted, clock.now() + 10_000, 20)).value;
}

function runs(history: HistoryEntry[]): RunHistoryEntry[] {
  return history.filter((entry): entry is RunHistoryEntry => entry.type === 'run');
}

describe('SchedulerLockAdmin on the in-memory provider: the whole console without Redis', () => {
  it('listJobs, listNodes and history: each run with its node, outcome, fencing token and error', async () => {
    const app = await startApp([Jobs]);
    const admin = app.get(SchedulerLockAdmin);

    const jobs = await until(
      () => admin.listJobs(),
      (list) => list.find((job) => job.jobName === 'report')?.lastRun != null,
    );
    expect(jobs.map((job) => job.jobName)).toEqual(['failing', 'leap-day', 'report']);
    expect(jobs.find((job) => job.jobName === 'report')).toMatchObject({
      kind: 'interval',
      schedule: 'every 200 ms',
      paused: false,
      nodes: ['node-a'],
      lastRun: { outcome: 'succeeded', node: 'node-a' },
    });
    expect(jobs.find((job) => job.jobName === 'leap-day')).toMatchObject({ schedule: '0 0 0 29 2 *', lastRun: null });
    expect((await admin.listNodes()).map((node) => node.node)).toEqual(['node-a']);

    const failed = await until(
      () => admin.history('failing', 10),
      (history) => runs(history).some((run) => run.outcome === 'failed'),
    );
    const run = runs(failed).find((entry) => entry.outcome === 'failed')!;
    expect(run).toMatchObject({ node: 'node-a', error: 'boom: the ledger is locked', attempt: 1 });
    expect(run.fencingToken).toBeGreaterThan(0);
    expect(run.finishedAt!.getTime()).toBeGreaterThanOrEqual(run.startedAt.getTime());
    await expect(admin.getJob('no-such-job')).rejects.toBeInstanceOf(UnknownJobError);
  });

  it('pause: the ticks are skipped as paused until resume; both are in the history, counted and emitted', async () => {
    const app = await startApp([Jobs]);
    const admin = app.get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 1,
    );
    const operatorEvent = nextEvent(app.events$, (event) => event.type === 'operator');

    expect(await admin.pause('report', { actor: 'alice', reason: 'ledger maintenance' })).toBe(true);
    expect(await admin.pause('report', { actor: 'alice' })).toBe(false);
    expect(await runClockUntil(operatorEvent)).toMatchObject({ action: 'pause', jobName: 'report', actor: 'alice' });
    // A run that had its lock before the pause may still end; none starts after the first paused skip.
    const pausedSkip = (event: LockEvent) =>
      event.type === 'skipped' && event.jobName === 'report' && event.reason === 'paused';
    await runClockUntil(events(app.events$, pausedSkip, 1));
    const from = app.recorded.length;
    await runClockUntil(events(app.events$, pausedSkip, 2));
    const sincePause = app.recorded.slice(from).filter((event) => event.jobName === 'report');
    expect(sincePause.filter((event) => event.type === 'started')).toEqual([]);
    expect(await admin.getJob('report')).toMatchObject({
      paused: true,
      pause: { actor: 'alice', reason: 'ledger maintenance' },
    });

    const started = nextEvent(app.events$, jobEvent('started', 'report'));
    expect(await admin.resume('report', { actor: 'alice' })).toBe(true);
    await runClockUntil(started);
    expect((await admin.history('report')).filter((entry) => entry.type !== 'run')).toMatchObject([
      { type: 'resume', actor: 'alice' },
      { type: 'pause', actor: 'alice', reason: 'ledger maintenance' },
    ]);
    const counted = await until(
      () => admin.getJob('report'),
      (job) => (job.skips.paused ?? 0) >= 2,
    );
    expect(counted.paused).toBe(false);
  });

  it('trigger: runs a job with no tick due once, as a manual run in its history', async () => {
    const app = await startApp([Jobs]);
    const admin = app.get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 1,
    );
    const started = nextEvent(app.events$, jobEvent('started', 'leap-day'));

    const outcome = await runClockUntil(admin.trigger('leap-day', { actor: 'bob', reason: 'rerun after the fix' }));
    expect(outcome).toMatchObject({ triggered: true, result: { node: 'node-a', state: 'started' } });
    await runClockUntil(started);
    const history = await until(
      () => admin.history('leap-day'),
      (entries) => runs(entries).length === 1,
    );
    expect(runs(history)[0]).toMatchObject({ outcome: 'succeeded', node: 'node-a', manual: { actor: 'bob' } });
    expect(history.find((entry) => entry.type === 'trigger')).toMatchObject({ actor: 'bob' });
  });

  it('unlock: frees a held lock (trigger refused before), and the run sees its lock lost (not-owner)', async () => {
    const app = await startApp([LongRun]);
    const admin = app.get(SchedulerLockAdmin);
    await runClockUntil(app.get(LongRun).started.promise);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 1,
    );
    const held = await admin.getJob('long-run');
    // A token only grows: in memory it counts from 1, on PostgreSQL it starts from the database's clock (µs).
    expect(held).toMatchObject({ holdingNode: 'node-a', fencingToken: expect.any(Number) });
    expect(held.fencingToken).toBeGreaterThan(0);
    expect(held.lockedUntil!.getTime()).toBeGreaterThan(Date.now());

    expect(await admin.trigger('long-run', { actor: 'bob' })).toEqual({
      triggered: false,
      reason: 'running',
      holdingNode: 'node-a',
    });
    expect(await admin.unlock('long-run', { actor: 'carol', reason: 'stuck' })).toEqual({ formerNode: 'node-a' });
    const reason = await runClockUntil(app.get(LongRun).lost.promise);
    expect(reason).toBeInstanceOf(LockLostError);
    expect(reason).toMatchObject({ reason: 'not-owner' });
    expect((await admin.getJob('long-run')).holdingNode).toBeNull();
    expect((await admin.history('long-run')).find((entry) => entry.type === 'unlock')).toMatchObject({
      actor: 'carol',
      reason: 'stuck',
      formerNode: 'node-a',
    });
  });

  it('finds the operator store by its ability, whatever the provider class', async () => {
    const store = new InMemoryLockProvider({ node: 'node-a' });
    // A provider of its own (a plain object), delegating to the in-memory one: no class to test for.
    const provider = {
      lock: store.lock.bind(store),
      lockJob: store.lockJob.bind(store),
      lockOccurrence: store.lockOccurrence.bind(store),
      recoverOccurrence: store.recoverOccurrence.bind(store),
      operatorProvider: store.operatorProvider.bind(store),
    };
    const app = await startApp([Jobs], provider);

    const jobs = await until(
      () => app.get(SchedulerLockAdmin).listJobs(),
      (list) => list.length === 3,
    );
    expect(jobs.map((job) => job.jobName)).toEqual(['failing', 'leap-day', 'report']);
  });

  it('refuses an oversized note or one with a NUL, lone surrogate or control character, before the store', async () => {
    const page = SchedulerLockDashboardModule.forRoot({ path: '/ops/locks', authorize: () => ({ actor: 'alice' }) });
    const app = await startApp([Jobs], undefined, { imports: [page], controllers: [] });
    const admin = app.get(SchedulerLockAdmin);
    await until(
      () => admin.listNodes(),
      (found) => found.length === 1,
    );
    const refused: [what: string, note: OperatorNote, says: string][] = [
      ['a 1 MB reason', { actor: 'alice', reason: 'x'.repeat(1 << 20) }, 'reason must be at most 500 characters'],
      ['a 1 MB actor', { actor: 'a'.repeat(1 << 20) }, 'actor must be at most 100 characters (got 1048576)'],
      ['a 101-character actor', { actor: 'a'.repeat(101) }, 'actor must be at most 100 characters (got 101)'],
      ['a NUL', { actor: 'alice', reason: 'a\u0000b' }, 'reason must not contain a control character (U+0000'],
      ['a lone surrogate', { actor: 'alice', reason: 'a\ud800b' }, 'reason must not contain a lone surrogate (U+D800'],
      ['an escape', { actor: 'ops\u001b[2J' }, 'actor must not contain a control character (U+001B at index 3)'],
    ];
    for (const [what, note, says] of refused) {
      for (const action of ['pause', 'resume', 'trigger', 'unlock'] as const) {
        const call = (admin[action] as (job: string, note: OperatorNote) => Promise<unknown>).call(
          admin,
          'report',
          note,
        );
        await expect(call.then(() => `${what}: ${action} accepted`)).rejects.toMatchObject({
          name: 'InvalidOperatorNoteError',
          message: expect.stringContaining(says),
        });
      }
    }
    expect((await admin.history('report', 50)).filter((entry) => entry.type !== 'run')).toEqual([]);
    expect(await admin.getJob('report')).toMatchObject({ paused: false });

    // The page answers 400 with the admin's words; a note at the limits passes (an emoji is a surrogate pair).
    const headers = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };
    const pause = (reason: unknown) =>
      fetch(`${app.url}/ops/locks/api/jobs/report/pause`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ reason }),
      });
    for (const reason of ['x'.repeat(501), 'a\u0000b', 'a\udc00b', 'tab\there', 42]) {
      const answer = await pause(reason);
      expect({ reason, status: answer.status }).toEqual({ reason, status: 400 });
      expect(((await answer.json()) as { message: string }).message).toMatch(/^reason must /);
    }
    expect((await pause(`${'x'.repeat(498)}👍`)).status).toBe(200);
    expect(await admin.getJob('report')).toMatchObject({ paused: true });
  });

  it('serves the status page and its endpoints: jobs, pause and history, with no Redis', async () => {
    const page = SchedulerLockDashboardModule.forRoot({ path: '/ops/locks', authorize: () => ({ actor: 'alice' }) });
    const app = await startApp([Jobs], undefined, { imports: [page], controllers: [] });
    const api = `${app.url}/ops/locks/api`;
    await until(
      () => app.get(SchedulerLockAdmin).listNodes(),
      (found) => found.length === 1,
    );

    const { jobs } = (await (await fetch(`${api}/jobs`)).json()) as { jobs: { jobName: string; paused: boolean }[] };
    expect(jobs.map(({ jobName, paused }) => ({ jobName, paused }))).toEqual([
      { jobName: 'failing', paused: false },
      { jobName: 'leap-day', paused: false },
      { jobName: 'report', paused: false },
    ]);
    const headers = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };
    const body = JSON.stringify({ reason: 'from the page' });
    const paused = await fetch(`${api}/jobs/report/pause`, { method: 'POST', headers, body });
    expect(paused.status).toBeLessThan(300);
    const history = (await (await fetch(`${api}/jobs/report/history`)).json()) as HistoryEntry[];
    expect(history.find((entry) => entry.type === 'pause')).toMatchObject({ actor: 'alice', reason: 'from the page' });
    expect(await app.get(SchedulerLockAdmin).getJob('report')).toMatchObject({ paused: true });
  });
});
