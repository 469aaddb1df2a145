import { jest } from '@jest/globals';
import { parseDuration, type ClusterNode, type HistoryEntry, type JobOverview } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import type { SchedulerApp } from '../support/scheduler-app.js';
import { waitUntil } from '../support/wait-until.js';
import { ISO_TIME, type Wire } from '../support/wire-times.js';
import {
  HEARTBEAT,
  JOB_NAMES,
  NOON,
  NOON_LEASE_MS,
  redisOperatorProvider,
  useOperatedCluster,
  waitForNodes,
} from './support/operated-app.js';
import { fields, tableRows } from './support/run-cli.js';

const cluster = useOperatedCluster('cli-views');
const { startNodes } = cluster;

/** A time relative to now as the tables show it: `in 4s`, `in 15h 3m`, `2s ago`, `now`. */
const FUTURE = /^(in \d\S*( \d\S*)?|now)$/;
const PAST = /^(\d\S*( \d\S*)? ago|now)$/;
/** Every clock API but `Date`, for `jest.useFakeTimers({ doNotFake })`: a fake wall clock over real timers. */
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/** The next 12:00 in Tokyo (03:00 UTC) after `now`. */
function nextTokyoNoon(now: number): number {
  const today = new Date(now).setUTCHours(3, 0, 0, 0);
  return today > now ? today : today + 86_400_000;
}

/** Runs `noon` once through the CLI on `app`'s node and waits until its lock is held. */
async function startNoon(app: SchedulerApp): Promise<void> {
  const started = nextEvent(app.events$, jobEvent('started', 'noon'));
  await cluster.operator.text('trigger', 'noon', '--actor', 'ops:test');
  await started;
}

describe('nest-scheduler-lock jobs', () => {
  it('--json: every job with its schedule, pause, holder, lock, next fire time and last run', async () => {
    const [app] = await startNodes('node-a');
    await nextEvent(app.history$, jobEvent('released', 'report'));
    const before = Date.now();
    const jobs = await cluster.operator.json<Wire<JobOverview[]>>('jobs');
    const after = Date.now();

    expect(jobs.map((job) => job.jobName)).toEqual(JOB_NAMES);
    const [noon, report, sweep] = jobs;
    expect(noon).toMatchObject({
      kind: 'cron',
      schedule: NOON.cron,
      timeZone: NOON.timeZone,
      paused: false,
      holdingNode: null,
      lockedUntil: null,
      nextFireAt: new Date(nextTokyoNoon(before)).toISOString(),
      lastRun: null,
      nodes: ['node-a'],
    });
    expect(sweep).toMatchObject({ kind: 'interval', schedule: 'every 3600000 ms', nextFireAt: null, lastRun: null });

    expect(report).toMatchObject({ kind: 'cron', schedule: '* * * * * *', paused: false, nodes: ['node-a'] });
    const nextFireAt = Date.parse(report.nextFireAt!);
    expect(nextFireAt).toBeGreaterThan(before);
    expect(nextFireAt).toBeLessThanOrEqual(after + 1_000);
    expect(nextFireAt % 1_000).toBe(0);
    const lastRun = report.lastRun!;
    expect(lastRun).toMatchObject({ outcome: 'succeeded', node: 'node-a', attempt: 1 });
    // A once-per-occurrence job: the run's nominal fire time, a whole second.
    for (const at of [lastRun.occurrence, lastRun.startedAt, lastRun.finishedAt]) expect(at).toMatch(ISO_TIME);
    expect(Date.parse(lastRun.occurrence!) % 1_000).toBe(0);
    expect(Date.parse(lastRun.finishedAt!)).toBeGreaterThanOrEqual(Date.parse(lastRun.startedAt));
    expect(lastRun.durationMs).toBeGreaterThanOrEqual(0);
  });

  it('shows the holder and its lock while a run holds it, null once the run released it, then the run as lastRun', async () => {
    const [app] = await startNodes('node-a');
    cluster.gate.hold('noon');
    await startNoon(app);

    const beforeHeld = Date.now();
    const held = (await cluster.operator.json<Wire<JobOverview[]>>('jobs')).find((job) => job.jobName === 'noon')!;
    expect(held.holdingNode).toBe('node-a');
    // A keepAlive lock is held one lease at a time.
    expect(held.lockedUntil).toMatch(ISO_TIME);
    expect(Date.parse(held.lockedUntil!)).toBeGreaterThan(beforeHeld);
    expect(Date.parse(held.lockedUntil!)).toBeLessThanOrEqual(Date.now() + NOON_LEASE_MS);
    const table = tableRows(await cluster.operator.text('jobs'));
    expect(table.map((row) => row.JOB)).toEqual(JOB_NAMES);
    expect(table[0]).toMatchObject({
      SCHEDULE: `${NOON.cron} (${NOON.timeZone})`,
      PAUSED: 'no',
      HOLDER: 'node-a',
      'LOCKED UNTIL': expect.stringMatching(FUTURE),
      'NEXT FIRE': expect.stringMatching(FUTURE),
      'LAST RUN': '-',
    });
    expect(table[2]).toEqual({
      JOB: 'sweep',
      HEALTH: 'never-run',
      SCHEDULE: 'every 3600000 ms',
      PAUSED: 'no',
      HOLDER: '-',
      'LOCKED UNTIL': '-',
      'NEXT FIRE': '-',
      'LAST RUN': '-',
    });

    const released = nextEvent(app.events$, jobEvent('released', 'noon'));
    cluster.gate.open('noon');
    await released;
    const free = (await cluster.operator.json<Wire<JobOverview[]>>('jobs')).find((job) => job.jobName === 'noon')!;
    expect(free).toMatchObject({ holdingNode: null, lockedUntil: null });
    expect(free.lastRun).toMatchObject({
      outcome: 'succeeded',
      node: 'node-a',
      occurrence: null,
      manual: { actor: 'ops:test' },
    });
    const [row] = tableRows(await cluster.operator.text('jobs'));
    expect(row).toMatchObject({ JOB: 'noon', HOLDER: '-', 'LOCKED UNTIL': '-' });
    expect(row['LAST RUN']).toMatch(/^succeeded on node-a (\S+ ago|now) \(took \S+, triggered by ops:test\)$/);
  });

  it('says so when no live node runs a job under the prefix, with exit code 0', async () => {
    expect(await cluster.operator.run('jobs')).toEqual({
      code: 0,
      stdout: `No live node runs a locked job under the key prefix "${cluster.shared.prefix}".\n`,
      stderr: '',
    });
    expect(await cluster.operator.json('jobs')).toEqual([]);
  });
});

describe('nest-scheduler-lock job NAME', () => {
  it('shows one job, field by field, and the same object as jobs with --json', async () => {
    const [app] = await startNodes('node-a');
    cluster.gate.hold('noon');
    await startNoon(app);

    const [listed] = await cluster.operator.json<Wire<JobOverview[]>>('jobs');
    const job = await cluster.operator.json<Wire<JobOverview>>('job', 'noon');
    expect(job).toEqual({ ...listed, lockedUntil: expect.stringMatching(ISO_TIME) });
    expect(job).toMatchObject({ jobName: 'noon', lockName: NOON.lockName, holdingNode: 'node-a', nodes: ['node-a'] });
    expect(Date.parse(job.lockedSince!)).toBeLessThanOrEqual(Date.now());

    const view = fields(await cluster.operator.text('job', 'noon'));
    expect(view).toMatchObject({
      job: 'noon',
      lock: NOON.lockName,
      kind: 'cron',
      schedule: `${NOON.cron} (${NOON.timeZone})`,
      paused: 'no',
      holder: 'node-a',
      'last run': '-',
      skips: '-',
      nodes: 'node-a',
    });
    const [nextFire, inHowLong] = view['next fire'].split(' (');
    expect(nextFire).toBe(new Date(nextTokyoNoon(Date.now())).toISOString());
    expect(inHowLong.slice(0, -1)).toMatch(FUTURE);
    expect(view['locked until']).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z \((in \S+|now)\)$/);
  });
});

describe('nest-scheduler-lock history NAME', () => {
  it('--json: the runs with their outcome, newest first, a triggered run with who asked, and the trigger itself', async () => {
    const [app] = await startNodes('node-a');
    cluster.gate.failNext('noon', 'the report server said no');
    const failed = nextEvent(app.events$, jobEvent('released', 'noon'));
    await cluster.operator.text('trigger', 'noon', '--actor', 'ops:alice', '--reason', 'rerun after the outage');
    await failed;
    const succeeded = nextEvent(app.events$, jobEvent('released', 'noon'));
    await cluster.operator.text('trigger', 'noon', '--actor', 'ops:bob');
    await succeeded;

    const history = await cluster.operator.json<Wire<HistoryEntry[]>>('history', 'noon');
    expect(history).toMatchObject([
      { type: 'run', outcome: 'succeeded', node: 'node-a', attempt: 1, manual: { actor: 'ops:bob' } },
      { type: 'trigger', actor: 'ops:bob' },
      {
        type: 'run',
        outcome: 'failed',
        node: 'node-a',
        error: 'the report server said no',
        manual: { actor: 'ops:alice' },
      },
      { type: 'trigger', actor: 'ops:alice', reason: 'rerun after the outage' },
    ]);
    expect(history).toHaveLength(4);
    expect(await cluster.operator.json<Wire<HistoryEntry[]>>('history', 'noon', '--limit', '1')).toEqual(
      history.slice(0, 1),
    );

    const table = tableRows(await cluster.operator.text('history', 'noon'));
    expect(table.map((row) => [row.WHAT, row['NODE / ACTOR']])).toEqual([
      ['run succeeded', 'node-a'],
      ['trigger', 'ops:bob'],
      ['run failed', 'node-a'],
      ['trigger', 'ops:alice'],
    ]);
    for (const row of table) expect(row.WHEN.split(' (')[1].slice(0, -1)).toMatch(PAST);
    expect(table[0].DETAIL).toMatch(/^took \S+, triggered by ops:bob, fencing token \d+$/);
    expect(table[1].DETAIL).toBe('');
    expect(table[2].DETAIL).toMatch(
      /^took \S+, triggered by ops:alice, fencing token \d+, error: the report server said no$/,
    );
    expect(table[3].DETAIL).toBe('reason: rerun after the outage');
  });

  it('says so for a job without history yet', async () => {
    await startNodes('node-a');
    expect(await cluster.operator.text('history', 'sweep')).toBe('sweep has no history yet.\n');
  });
});

describe('nest-scheduler-lock nodes', () => {
  // Only the wall clock is fake (timers stay real): a late heartbeat on a busy machine cannot age, and 3 heartbeats
  // pass when the test says so.
  afterEach(() => jest.useRealTimers());

  it('lists the live nodes with their jobs, and no longer a node silent for 3 heartbeats', async () => {
    const [, nodeB] = await startNodes('node-a', 'node-b');
    jest.useFakeTimers({ doNotFake: [...REAL_TIMERS], now: Date.now() });
    // Each node's next heartbeat carries the frozen time: from then on, neither can look silent.
    await waitForNodes(redisOperatorProvider(cluster.shared.client, cluster.shared.prefix), ['node-a', 'node-b']);
    const nodes = await cluster.operator.json<Wire<ClusterNode[]>>('nodes');
    expect(nodes.map((node) => node.node)).toEqual(['node-a', 'node-b']);
    for (const node of nodes) {
      expect([...node.jobs].sort()).toEqual(JOB_NAMES);
      expect(node.version).toMatch(/^\d+\.\d+\.\d+/);
      expect(Date.parse(node.lastSeen)).toBeGreaterThanOrEqual(Date.parse(node.startedAt));
    }
    const table = tableRows(await cluster.operator.text('nodes'));
    expect(table.map((row) => row.NODE)).toEqual(['node-a', 'node-b']);
    for (const row of table) {
      expect(row.VERSION).toBe(nodes[0].version);
      expect(row.STARTED).toMatch(PAST);
      expect(row['LAST SEEN']).toMatch(PAST);
      expect(row.JOBS.split(', ').sort()).toEqual(JOB_NAMES);
    }

    await nodeB.close();
    jest.setSystemTime(Date.now() + 3 * parseDuration(HEARTBEAT) + 1);
    await waitUntil(
      async () =>
        (await cluster.operator.json<Wire<ClusterNode[]>>('nodes')).map((node) => node.node).join() === 'node-a',
      'the CLI lists node-a alone',
    );
  });
});
