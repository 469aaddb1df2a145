import { jest } from '@jest/globals';
import { compileKitNode } from '../support/kit-node.js';
import { Injectable, type Type } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import { SchedulerLock, type LockEvent } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { InMemoryLockProvider } from '../../lib/providers/in-memory/in-memory-lock-provider.js';
import { InMemoryOperatorProvider } from '../../lib/providers/in-memory/in-memory-operator-provider.js';
import { ClusterPresence } from '../../lib/nest/cluster-presence.js';
import type { OperatorProvider } from '../../lib/operators/operator-provider.js';

/** The 2 s occurrences start here; the nodes start 100 ms before the first. */
const T0 = Date.parse('2027-01-01T00:00:00Z');
const at = (seconds: number) => new Date(T0 + seconds * 1_000);

const store = new TestLockProvider();
const open: TestingModule[] = [];
let failures = 0;

@Injectable()
class Jobs {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('*/2 * * * * *', { name: 'every-2s' })
  every2s() {
    if (failures > 0) throw new Error(`boom (${failures--} more)`);
  }
}

/** `count` more locked jobs every 2 s, `job-0`…, decorated as the compiler decorates `Jobs`. */
function moreJobs(count: number): Type {
  @Injectable()
  class MoreJobs {}
  for (let index = 0; index < count; index++) {
    const name = `job-${index}`;
    const descriptor = { value: () => undefined, writable: true, configurable: true };
    const decorators = [SchedulerLock({ lockAtMostFor: '1m' }), Cron('*/2 * * * * *', { name })];
    const decorated = Reflect.decorate(decorators, MoreJobs.prototype, name, descriptor) as PropertyDescriptor;
    Object.defineProperty(MoreJobs.prototype, name, decorated);
  }
  return MoreJobs;
}

async function startNode(node: string, pauseAfter?: number, jobs: Type[] = []): Promise<TestNode> {
  const moduleRef = await compileKitNode(store, node, [Jobs, ...jobs], {
    health: { grace: '500ms', failingAfter: 2, pauseAfter },
  });
  open.push(moduleRef);
  return SchedulerLockTest.node(moduleRef);
}

async function stopNodes(): Promise<void> {
  await Promise.all(open.splice(0).map((moduleRef) => moduleRef.close()));
}

/** Every health event of `nodes`, as `<node> <type> <occurrences>`. */
function healthEvents(nodes: TestNode[]): string[] {
  const seen: string[] = [];
  for (const node of nodes) {
    node.events.events$.subscribe((event: LockEvent) => {
      if (event.type === 'missed') seen.push(`${event.node} missed ${event.occurrences.map(seconds).join(',')}`);
      if (event.type === 'failing') seen.push(`${event.node} failing ${event.failuresInARow}`);
      if (event.type === 'healthy') seen.push(`${event.node} healthy`);
    });
  }
  return seen;
}

/** The operator store port's methods, whose calls a test counts (not the lock path's helpers, `isPaused`, `record`). */
const STORE_METHODS = Object.keys({
  publish: 0,
  takeTriggers: 0,
  reportTrigger: 0,
  forgetNodes: 0,
  claimHealthReports: 0,
  nodes: 0,
  jobs: 0,
  job: 0,
  history: 0,
  lockState: 0,
  clusterReading: 0,
  skips: 0,
  pause: 0,
  resume: 0,
  requestTrigger: 0,
  withdrawTrigger: 0,
  triggerResult: 0,
  unlock: 0,
} satisfies Record<keyof OperatorProvider, 0>) as (keyof OperatorProvider)[];

/** Spies that call through on the in-memory store's port methods: the calls since the last `clear()`. */
function spyOnStore() {
  const spies = STORE_METHODS.map(
    (method) => [method, jest.spyOn(InMemoryOperatorProvider.prototype, method)] as const,
  );
  const publish = spies.find(([method]) => method === 'publish')![1] as jest.Spied<OperatorProvider['publish']>;
  return {
    /** The methods called, sorted; `publish` named with the node that sent it. */
    calls: () =>
      [
        ...spies.flatMap(([method, spy]) =>
          method === 'publish' ? [] : Array<string>(spy.mock.calls.length).fill(method),
        ),
        ...publish.mock.calls.map(([node]) => `publish ${node.node}`),
      ].sort(),
    clear: () => spies.forEach(([, spy]) => spy.mockClear()),
    restore: () => spies.forEach(([, spy]) => spy.mockRestore()),
  };
}

/** The in-memory operator store's port calls while `check` runs, sorted; its result. */
async function storeCalls<T>(check: () => Promise<T>): Promise<[string[], T]> {
  const store = spyOnStore();
  try {
    const result = await check();
    return [store.calls(), result];
  } finally {
    store.restore();
  }
}

const seconds = (date: Date) => `${(date.getTime() - T0) / 1_000}s`;

/** Each node ticks the occurrence of `second`, on the fake clock at that second plus 10 ms. */
async function tickAll(nodes: TestNode[], second: number): Promise<void> {
  jest.setSystemTime(T0 + second * 1_000 + 10);
  for (const node of nodes) await node.tick('every-2s');
}

beforeEach(() => {
  jest.useFakeTimers({ now: T0 - 100 });
});
afterEach(async () => {
  await stopNodes();
  jest.useRealTimers();
  store.reset();
  failures = 0;
});

describe('job health on three nodes of a */2 s job, on fake time', () => {
  it('lists the occurrences missed while every node was down, once, and emits missed once for the cluster', async () => {
    const first = await Promise.all(['node-1', 'node-2', 'node-3'].map((name) => startNode(name)));
    for (const second of [0, 2, 4]) await tickAll(first, second);
    expect((await first[0].checkHealth())[0]).toMatchObject({ state: 'on-time', missed: [] });
    await stopNodes();

    // Ten seconds without a node; then two start, and both check before either ticks.
    jest.setSystemTime(T0 + 14_100);
    const [a, b] = await Promise.all(['node-4', 'node-5'].map((name) => startNode(name)));
    const seen = healthEvents([a, b]);
    const missed = [6, 8, 10, 12].map(at);
    const [health] = await a.checkHealth();
    expect(health).toMatchObject({ jobName: 'every-2s', state: 'missed', unhealthy: true, missed });
    expect(health.lastSuccess).toEqual(new Date(T0 + 4_010));
    await b.checkHealth();
    expect(seen).toEqual(['node-4 missed 6s,8s,10s,12s']);

    // The admin of any node lists them; after a run the job is healthy again, and nothing is reported twice.
    expect(await b.admin.getHealth('every-2s')).toMatchObject({ missed });
    await tickAll([a, b], 14);
    await a.checkHealth();
    await b.checkHealth();
    expect(seen).toEqual(['node-4 missed 6s,8s,10s,12s', 'node-4 healthy', 'node-5 healthy']);
    expect(await a.admin.getHealth('every-2s')).toMatchObject({ state: 'on-time', missed });
  });

  it('reports the occurrences a 10 s store outage cost as missed, once, when the store is back', async () => {
    const nodes = await Promise.all(['node-1', 'node-2', 'node-3'].map((name) => startNode(name)));
    const seen = healthEvents(nodes);
    for (const second of [0, 2, 4]) await tickAll(nodes, second);
    // From 5 s to 15 s the store refuses the claims of the ticks and the reads of the health checks.
    const outage = new Error('connect ECONNREFUSED 127.0.0.1:6379');
    const claims = jest.spyOn(InMemoryLockProvider.prototype, 'lockOccurrence').mockRejectedValue(outage);
    const reads = jest.spyOn(InMemoryOperatorProvider.prototype, 'clusterReading').mockRejectedValue(outage);
    for (const second of [6, 8, 10, 12, 14]) {
      jest.setSystemTime(T0 + second * 1_000 + 10);
      for (const node of nodes) {
        expect(await node.tick('every-2s')).toMatchObject({ status: 'skipped', reason: 'provider-error' });
        expect(await node.checkHealth()).toEqual([]);
      }
    }
    claims.mockRestore();
    reads.mockRestore();

    jest.setSystemTime(T0 + 15_100);
    for (const node of nodes) await node.checkHealth();
    expect(seen).toEqual(['node-1 missed 6s,8s,10s,12s']);
    expect(await nodes[2].admin.getHealth('every-2s')).toMatchObject({ state: 'missed', late: at(14) });
    await tickAll(nodes, 16);
    for (const node of nodes) await node.checkHealth();
    expect(seen).toEqual([
      'node-1 missed 6s,8s,10s,12s',
      'node-1 missed 14s',
      'node-1 healthy',
      'node-2 healthy',
      'node-3 healthy',
    ]);
  });

  it('reports failing once for the cluster after failingAfter failed runs, and healthy after a success', async () => {
    const nodes = await Promise.all(['node-1', 'node-2', 'node-3'].map((name) => startNode(name)));
    const seen = healthEvents(nodes);
    const checkAll = async () => {
      for (const node of nodes) await node.checkHealth();
    };
    failures = 2;
    await tickAll(nodes, 0);
    await checkAll();
    await tickAll(nodes, 2);
    const [failing] = await nodes[0].checkHealth();
    expect(failing).toMatchObject({ state: 'failing', failuresInARow: 2, failingSince: at(0) });
    await checkAll();
    expect(seen).toEqual(['node-1 failing 2']);
    await tickAll(nodes, 4);
    await checkAll();
    expect(seen).toEqual(['node-1 failing 2', 'node-1 healthy', 'node-2 healthy', 'node-3 healthy']);
  });

  it('pauses the job after pauseAfter failed runs, an operator action in its history, until resume', async () => {
    const nodes = await Promise.all(['node-1', 'node-2', 'node-3'].map((name) => startNode(name, 3)));
    failures = 10;
    for (const second of [0, 2, 4]) await tickAll(nodes, second);
    await Promise.all(nodes.map((node) => node.checkHealth()));
    const [pause] = await nodes[1].admin.history('every-2s', 1);
    expect(pause).toMatchObject({
      type: 'pause',
      actor: 'scheduler',
      reason: '3 failures in a row (health.pauseAfter: 3)',
    });
    expect((await nodes[2].admin.history('every-2s')).filter((entry) => entry.type === 'pause')).toHaveLength(1);
    await tickAll(nodes, 6);
    expect(await nodes[0].tick('every-2s')).toMatchObject({ status: 'skipped', reason: 'paused' });
    expect(await nodes[0].admin.getHealth('every-2s')).toMatchObject({ state: 'paused' });

    // An operator resumes it: the count starts anew, and the scheduler does not pause it again at once.
    await nodes[0].admin.resume('every-2s', { actor: 'ops' });
    await tickAll(nodes, 8);
    await Promise.all(nodes.map((node) => node.checkHealth()));
    expect(await nodes[0].admin.getHealth('every-2s')).toMatchObject({ state: 'on-time', failuresInARow: 1 });
  });

  it.each([1, 50])(
    'reads the store once per check of %i jobs, and claims nothing with nothing to report',
    async (jobs) => {
      const node = await startNode('node-1', undefined, jobs > 1 ? [moreJobs(jobs - 1)] : []);
      await tickAll([node], 0);
      const [calls, healths] = await storeCalls(() => node.checkHealth());
      expect(healths.map((health) => health.state)).toEqual(['on-time', ...Array(jobs - 1).fill('never-run')]);
      expect(calls).toEqual(['clusterReading']);
    },
  );

  it('claims the missed reports of every job in one call per check', async () => {
    const first = await startNode('node-1', undefined, [moreJobs(2)]);
    jest.setSystemTime(T0 + 10);
    for (const job of ['every-2s', 'job-0', 'job-1']) await first.tick(job);
    await stopNodes();
    jest.setSystemTime(T0 + 6_100);
    const node = await startNode('node-2', undefined, [moreJobs(2)]);
    const seen: string[] = [];
    node.events.events$.subscribe((event) => event.type === 'missed' && seen.push(`${event.jobName}`));
    const [calls, healths] = await storeCalls(() => node.checkHealth());
    expect(healths.map((health) => health.missed)).toEqual(Array(3).fill([at(2), at(4)]));
    expect(calls).toEqual(['claimHealthReports', 'clusterReading']);
    expect(seen).toEqual(['every-2s', 'job-0', 'job-1']);
  });

  it('is late when an occurrence is not started within the grace, and never-run before the first', async () => {
    const [node] = await Promise.all(['node-1'].map((name) => startNode(name)));
    expect((await node.checkHealth())[0].state).toBe('never-run');
    await tickAll([node], 0);
    jest.setSystemTime(T0 + 2_600);
    expect((await node.checkHealth())[0]).toMatchObject({ state: 'late', late: at(2), unhealthy: true });
  });
});

describe('the health turn: one node of three reads the cluster health each interval, on fake time', () => {
  const INTERVAL = 1_000;
  const startTurnNodes = async () => {
    const nodes = await Promise.all(
      ['node-1', 'node-2', 'node-3'].map(async (node) => {
        const moduleRef = await compileKitNode(store, node, [Jobs], {
          heartbeatInterval: INTERVAL,
          health: { grace: '500ms', failingAfter: 2 },
        });
        open.push(moduleRef);
        return SchedulerLockTest.node(moduleRef);
      }),
    );
    // A first read loads `cron` (a dynamic import, real I/O) before the fake intervals start.
    await nodes[0].admin.listHealth();
    return nodes;
  };

  it('makes one heartbeat call per node per interval, with its skips, and one health reading per interval', async () => {
    const nodes = await startTurnNodes();
    const calls = spyOnStore();
    // The scheduler's own ticks of the job skip too: every skip counts.
    const skipped: string[] = [];
    for (const node of nodes) {
      node.events.events$.subscribe((event: LockEvent) => event.type === 'skipped' && skipped.push(event.reason));
    }
    try {
      // The heartbeats at start, on the next turn of the event loop, then five intervals.
      await jest.advanceTimersByTimeAsync(0);
      for (let interval = 0; interval < 5; interval++) {
        // Each node ticks the job: one runs an occurrence, the others skip it and count the skip.
        for (const node of nodes) await node.tick('every-2s');
        calls.clear();
        await jest.advanceTimersByTimeAsync(INTERVAL);
        // Besides the trigger poll's takeTriggers, every second whatever the heartbeatInterval.
        expect(calls.calls()).toEqual([
          'clusterReading',
          'publish node-1',
          'publish node-2',
          'publish node-3',
          ...Array(3).fill('takeTriggers'),
        ]);
      }
    } finally {
      calls.restore();
    }
    // Two skips at least per interval (three when the occurrence ran in the one before), each in the store's count.
    expect(skipped.length).toBeGreaterThanOrEqual(10);
    const { skips } = (await nodes[0].admin.getJob('every-2s'))!;
    expect(Object.values(skips).reduce((sum, count) => sum + count, 0)).toBe(skipped.length);
  });

  it('sends the skips a failed heartbeat drained with the next one', async () => {
    const [node] = await startTurnNodes();
    const held = await store.hold('every-2s');
    for (let tick = 0; tick < 3; tick++) expect(await node.tick('every-2s')).toMatchObject({ reason: 'locked' });
    await held.release();
    const publish = jest.spyOn(InMemoryOperatorProvider.prototype, 'publish');
    publish.mockRejectedValueOnce(new Error('store down'));
    try {
      await node.publish();
      expect(publish).toHaveBeenCalledTimes(1);
      expect((await node.admin.getJob('every-2s'))?.skips).toEqual({});
      await node.publish();
    } finally {
      publish.mockRestore();
    }
    expect((await node.admin.getJob('every-2s'))?.skips).toEqual({ locked: 3 });
  });

  it.each(['stops', 'goes silent'])(
    'emits failing and healthy once for the cluster when the holder %s in between',
    async (how) => {
      const nodes = await startTurnNodes();
      const seen = healthEvents(nodes);
      const advanceTo = (ms: number) => jest.advanceTimersByTimeAsync(T0 + ms - Date.now());
      const tickOn = async (live: TestNode[], ms: number) => {
        await advanceTo(ms);
        for (const node of live) await node.tick('every-2s');
      };
      failures = 2;
      // Runs at 0 s and 2 s fail: the holder's check at 2.9 s finds the job failing.
      await tickOn(nodes, 10);
      await tickOn(nodes, 2_010);
      await advanceTo(3_000);
      expect(seen).toHaveLength(1);
      const holder = nodes.findIndex((node) => seen[0] === `${node.node} failing 2`);
      expect(holder).toBeGreaterThanOrEqual(0);
      if (how === 'stops') {
        await open[holder].close();
      } else {
        // No more heartbeat, as if it crashed: its lease runs out, and another node takes the turn with what it left.
        nodes[holder].get(ClusterPresence).stop();
      }
      // The run at 4 s succeeds: the node holding the turn now says healthy, once.
      await tickOn(
        nodes.filter((_, index) => index !== holder),
        4_010,
      );
      await advanceTo(7_000);
      expect(seen).toHaveLength(2);
      expect(seen[1]).toMatch(/^node-\d healthy$/);
      expect(seen[1]).not.toBe(`${nodes[holder].node} healthy`);
    },
  );
});
