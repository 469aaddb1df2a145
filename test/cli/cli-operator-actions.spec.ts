import { userInfo } from 'node:os';
import { filter, firstValueFrom, merge, take, timeout, toArray } from 'rxjs';
import { LockLostError, type HistoryEntry, type JobOverview } from '../../lib/index.js';
import { type OperatorProvider, type OperatorEntry } from '../../lib/provider/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import type { SchedulerApp } from '../support/scheduler-app.js';
import { NOON, useOperatedCluster } from './support/operated-app.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { ISO_TIME } from '../support/wire-times.js';

const cluster = useOperatedCluster('cli-operator-actions');
const { startNodes } = cluster;

async function job(name: string): Promise<JobOverview> {
  return cluster.operator.json<JobOverview>('job', name);
}

/** Starts node-a and triggers its noon job, whose run the gate holds until the test opens it. */
async function runNoonHeld(): Promise<SchedulerApp> {
  const [app] = await startNodes('node-a');
  cluster.gate.hold('noon');
  const started = nextEvent(app.events$, jobEvent('started', 'noon'));
  await cluster.operator.text('trigger', 'noon');
  await started;
  return app;
}

describe('nest-scheduler-lock pause / resume', () => {
  it('pause: every node skips the ticks (reason paused) until resume; both are in the history with who and why', async () => {
    const apps = await startNodes('node-a', 'node-b');
    expect(
      await cluster.operator.run('pause', 'report', '--actor', 'ops:alice', '--reason', 'database migration'),
    ).toEqual({
      code: 0,
      stdout: 'Paused report: every node skips its ticks until resume; a run in progress goes on.\n',
      stderr: '',
    });
    // The next tick on each node, and every tick for the next two seconds, is skipped as paused.
    const ticks = merge(...apps.map((app) => app.events$)).pipe(
      filter((event) => event.jobName === 'report' && (event.type === 'skipped' || event.type === 'started')),
    );
    const skipped = await firstValueFrom(ticks.pipe(take(4), toArray(), timeout(5_000)));
    expect(skipped.map((event) => [event.type, 'reason' in event && event.reason])).toEqual(
      Array(4).fill(['skipped', 'paused']),
    );
    expect(new Set(skipped.map((event) => event.node))).toEqual(new Set(['node-a', 'node-b']));
    expect(await job('report')).toMatchObject({
      paused: true,
      pause: { actor: 'ops:alice', reason: 'database migration' },
    });
    expect(await cluster.operator.run('pause', 'report', '--actor', 'ops:alice')).toMatchObject({
      code: 0,
      stdout: 'report was paused already.\n',
    });

    const runs = firstValueFrom(
      ticks.pipe(
        filter((event) => event.type === 'started'),
        timeout(5_000),
      ),
    );
    // No --actor: the user running the CLI.
    expect(await cluster.operator.text('resume', 'report')).toBe('Resumed report.\n');
    await runs;
    expect(await job('report')).toMatchObject({ paused: false });
    expect(await cluster.operator.text('resume', 'report')).toBe('report was not paused.\n');

    const operatorEntries = (await cluster.operator.json<HistoryEntry[]>('history', 'report', '--limit', '50')).filter(
      (entry) => entry.type !== 'run',
    );
    expect(operatorEntries).toEqual(
      [
        { type: 'resume', actor: `cli:${userInfo().username}`, reason: null, at: expect.stringMatching(ISO_TIME) },
        { type: 'pause', actor: 'ops:alice', reason: 'database migration', at: expect.stringMatching(ISO_TIME) },
      ].map((entry) => ({ ...entry, formerNode: null })),
    );
  });

  it('--json: what the action changed, and who did it', async () => {
    await startNodes('node-a');
    expect(await cluster.operator.json('pause', 'sweep', '--actor', 'ops:alice', '--reason', 'why not')).toEqual({
      job: 'sweep',
      action: 'pause',
      changed: true,
      actor: 'ops:alice',
      reason: 'why not',
    });
    expect(await cluster.operator.json('resume', 'sweep', '--actor', 'ops:bob')).toEqual({
      job: 'sweep',
      action: 'resume',
      changed: true,
      actor: 'ops:bob',
    });
  });
});

describe('nest-scheduler-lock trigger', () => {
  it('runs the job exactly once, on one of the nodes that have it, and says which', async () => {
    const apps = await startNodes('node-a', 'node-b');
    const firstStart = firstValueFrom(
      merge(...apps.map((app) => app.events$)).pipe(filter(jobEvent('started', 'noon'))),
    );
    const released = firstValueFrom(
      merge(...apps.map((app) => app.events$)).pipe(filter(jobEvent('released', 'noon'))),
    );

    const outcome = await cluster.operator.json<{
      triggered: boolean;
      id: string;
      result: { node: string; state: string };
    }>('trigger', 'noon', '--actor', 'ops:alice');
    expect(outcome).toMatchObject({ job: 'noon', triggered: true, result: { state: 'started' } });
    expect(['node-a', 'node-b']).toContain(outcome.result.node);
    expect((await firstStart).node).toBe(outcome.result.node);
    await released;
    // The request is taken (HDEL) by the node that ran it: no other node can take it any more.
    expect(await cluster.shared.client.hexists(`${cluster.shared.prefix}:triggers`, 'noon')).toBe(0);
    await Promise.all(apps.map((app) => app.close()));
    const starts = apps.flatMap((app) => app.recorded.filter(jobEvent('started', 'noon')));
    expect(starts).toHaveLength(1);
    expect(cluster.gate.runs.filter((run) => run.job === 'noon').map((run) => run.node)).toEqual([outcome.result.node]);

    const [run] = await cluster.operator.json<HistoryEntry[]>('history', 'noon');
    expect(run).toMatchObject({ type: 'run', outcome: 'succeeded', node: outcome.result.node });
    expect(run).toMatchObject({ manual: { actor: 'ops:alice', triggerId: outcome.id } });
  });

  it('says where it runs, for people', async () => {
    await startNodes('node-a');
    const { code, stdout, stderr } = await cluster.operator.run('trigger', 'noon');
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout).toMatch(/^Triggered noon: running on node-a \(trigger [0-9a-f-]{36}\)\.\n$/);
  });

  it('is refused while a run holds the lock: exit code 1 and why, the run untouched', async () => {
    await runNoonHeld();

    expect(await cluster.operator.run('trigger', 'noon')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'nest-scheduler-lock: refused: noon is running on node-a; trigger it again once that run has ended\n',
    });
    const refused = await cluster.operator.run('trigger', 'noon', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      job: 'noon',
      triggered: false,
      reason: 'running',
      holdingNode: 'node-a',
    });
    expect(refused.stderr).toMatch(/^nest-scheduler-lock: refused: noon is running on node-a;.*\n$/);
    expect(cluster.gate.runs.filter((run) => run.job === 'noon')).toHaveLength(1);
    expect(cluster.gate.runs[cluster.gate.runs.length - 1].signal.aborted).toBe(false);
  });
});

describe('nest-scheduler-lock trigger of a job whose nodes do not take it', () => {
  /** A live node that publishes `ghost` but runs no app: nothing takes its triggers. */
  async function publishGhost(): Promise<OperatorProvider> {
    const { client, prefix } = cluster.shared;
    const store = new RedisLockProvider(client, { keyPrefix: prefix }).operatorProvider();
    const now = Date.now();
    // Last seen "in an hour": live for the CLI's whole run (3 heartbeats of 200 ms), however loaded the machine.
    const node = {
      node: 'silent-node',
      version: '1',
      startedAt: new Date(now),
      lastSeen: new Date(now + 3_600_000),
      jobs: ['ghost'],
      elections: [],
    };
    await store.publish(
      node,
      [
        {
          jobName: 'ghost',
          lockName: 'ghost',
          kind: 'interval',
          schedule: '1000',
          occurrence: false,
          lockAtMostFor: 1,
          lockAtLeastFor: 0,
          timeZone: null,
          lease: null,
        },
      ],
      new Map(),
      { lease: 1, unhealthy: {} },
    );
    return store;
  }

  it('says a trigger is pending already, and that that one runs: exit code 1', async () => {
    const store = await publishGhost();
    const { request } = await store.requestTrigger('ghost', 'ghost', { actor: 'ops:alice' });
    const refused = await cluster.operator.run('trigger', 'ghost', '--actor', 'ops:bob', '--json');
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toEqual({
      job: 'ghost',
      triggered: false,
      reason: 'pending',
      id: request.id,
      actor: 'ops:alice',
    });
    expect(refused.stderr).toBe(
      `nest-scheduler-lock: not triggered: a trigger of ghost by ops:alice is pending (trigger ${request.id}); ` +
        'it runs once\n',
    );
  });

  it('withdraws a trigger no node took within 5 s and says it will not run: exit code 1', async () => {
    await publishGhost();
    const { code, stdout, stderr } = await cluster.operator.run('trigger', 'ghost');
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(
      /^nest-scheduler-lock: no node took the run of ghost within 5s \(trigger [0-9a-f-]{36}\); it is withdrawn and will not run\n$/,
    );
    expect(await cluster.shared.client.hlen(`${cluster.shared.prefix}:triggers`)).toBe(0);
  });
});

describe('nest-scheduler-lock unlock', () => {
  it("force-releases a running job's lock: the run's signal aborts with LockLostError not-owner at its next renewal", async () => {
    const app = await runNoonHeld();
    const [run] = cluster.gate.runs.filter((each) => each.job === 'noon');
    const lost = nextEvent(app.events$, jobEvent('lost', 'noon'));

    expect(await cluster.operator.run('unlock', 'noon', '--actor', 'ops:alice', '--reason', 'stuck')).toEqual({
      code: 0,
      stdout: 'Unlocked noon: the run on node-a sees its lock lost (not-owner) at its next renewal or release.\n',
      stderr: '',
    });
    // The run is held (its gate stays closed) and releases only after its handler ends: the lease keeper's
    // renewal is the one path that can find the lock owned by another (not-owner) and abort the signal.
    expect(await lost).toMatchObject({ reason: 'not-owner', lockName: NOON.lockName });
    expect(run.signal.aborted).toBe(true);
    expect(run.signal.reason).toBeInstanceOf(LockLostError);
    expect(run.signal.reason).toMatchObject({ reason: 'not-owner', lockName: NOON.lockName });

    expect(await job('noon')).toMatchObject({ holdingNode: null });
    const [unlock] = (await cluster.operator.json<HistoryEntry[]>('history', 'noon')).filter(
      (entry): entry is OperatorEntry => entry.type === 'unlock',
    );
    expect(unlock).toEqual({
      type: 'unlock',
      actor: 'ops:alice',
      reason: 'stuck',
      formerNode: 'node-a',
      at: expect.stringMatching(ISO_TIME),
    });
    expect(await cluster.operator.json('unlock', 'noon', '--actor', 'ops:alice')).toEqual({
      job: 'noon',
      action: 'unlock',
      formerNode: null,
      actor: 'ops:alice',
    });
    // Already free: said so, and the history keeps its one unlock entry.
    expect(await cluster.operator.run('unlock', 'noon', '--actor', 'ops:alice')).toMatchObject({
      code: 0,
      stdout: 'noon was not locked.\n',
    });
    const unlocks = (await cluster.operator.json<HistoryEntry[]>('history', 'noon')).filter(
      (entry) => entry.type === 'unlock',
    );
    expect(unlocks).toHaveLength(1);
  });
});
