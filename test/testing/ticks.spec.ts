import { jest } from '@jest/globals';
import { AssertionError } from 'node:assert';
import { Injectable } from '@nestjs/common';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { InMemoryLockProvider, LockLostError, SchedulerLockModule } from '../../lib/index.js';
import type { InstrumentedRun, RunInstrumentation } from '../../lib/provider/index.js';
import { SchedulerLockTest, TestLockProvider } from '../../lib/testing/index.js';
import { closeNodes, handled, Jobs, NEW_YEAR, runtimeSweep, startNode, startNodes } from './cluster-kit.js';

const store = new TestLockProvider();
afterEach(async () => {
  await closeNodes();
  store.reset();
  jest.useRealTimers();
});

describe('tick(): a locked job run now, as the scheduler runs it', () => {
  it('runs a cron job through its occurrence claim and resolves once the run is over', async () => {
    const [node] = await startNodes(store, 1);
    const outcome = await node.tick('yearly', { at: new Date(NEW_YEAR.getTime() + 300) });
    expect(outcome).toMatchObject({ status: 'ran', node: 'node-1', occurrence: NEW_YEAR });
    expect(handled).toEqual(['yearly on node-1']);
    expect(outcome).toMatchObject({ failed: false, fencingToken: 1, lost: null });
    // The claim is recorded in the store: a second tick of the same occurrence is skipped.
    expect(await node.tick('yearly', { at: new Date(NEW_YEAR.getTime() + 900) })).toMatchObject({
      status: 'skipped',
      reason: 'already-ran',
    });
  });

  it("resolves to the handler's error, released and recorded as failed", async () => {
    const [node] = await startNodes(store, 1);
    const outcome = await node.tick('failing', { at: NEW_YEAR });
    expect(outcome).toMatchObject({ status: 'ran', failed: true, error: new Error('boom: the ledger is locked') });
    expect((await store.runs('failing')).map((run) => run.outcome)).toEqual(['failed']);
  });

  it('ticks intervals and timeouts through the locked tick their timer calls', async () => {
    const [node] = await startNodes(store, 1);
    expect(await node.tick('warm-up')).toMatchObject({ status: 'ran', occurrence: null });
    expect(await node.tick('sweep')).toMatchObject({ status: 'ran' });
    expect(handled).toEqual(['warm-up on node-1', 'sweep on node-1']);
    // lockAtLeastFor 5m keeps the lock after the run: the next tick is skipped.
    expect(await node.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked', node: 'node-1' });
  });

  it("ticks a locked timer the app adds itself, with its callback's result", async () => {
    const node = await startNode(store, 'node-1', [runtimeSweep(() => 'swept')]);
    expect(await node.tick('runtime-sweep')).toMatchObject({ status: 'ran', failed: false, result: 'swept' });
  });

  it('rejects a job that is not a locked job of the node', async () => {
    const [node] = await startNodes(store, 1);
    await expect(node.tick('no-such-job')).rejects.toThrow('No locked job named "no-such-job" on node-1');
  });

  it("keeps the app's options from forRootAsync, its own instrumentation included", async () => {
    const wrapped: string[] = [];
    const instrumentation: RunInstrumentation = {
      around: (run: InstrumentedRun, task) => {
        wrapped.push(`${run.jobName} on ${run.node}`);
        return Promise.resolve(task());
      },
    };
    const builder = Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRootAsync({
          useFactory: () => ({
            redis: 'redis://no-such-host.invalid:6379',
            keyPrefix: 'app',
            defaultLockAtMostFor: '1m',
            instrumentation,
          }),
        }),
      ],
      providers: [Jobs],
    });
    const moduleRef = await SchedulerLockTest.override(builder, { store, node: 'node-7' }).compile();
    try {
      const node = await SchedulerLockTest.node(moduleRef);
      expect(await node.tick('warm-up')).toMatchObject({ status: 'ran', node: 'node-7' });
      expect(wrapped).toEqual(['warm-up on node-7']);
    } finally {
      await moduleRef.close();
    }
  });

  it('refuses an app not built with SchedulerLockTest.override()', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRoot({ provider: new InMemoryLockProvider(), defaultLockAtMostFor: '1m' }),
      ],
    }).compile();
    try {
      await expect(SchedulerLockTest.node(moduleRef)).rejects.toThrow('build the app with SchedulerLockTest.override');
    } finally {
      await moduleRef.close();
    }
  });
});

describe('several nodes in one process, one store', () => {
  it('three nodes tick one occurrence: it runs once, and the assertion names the node', async () => {
    const nodes = await startNodes(store, 3);
    const outcomes = await Promise.all(nodes.map((node) => node.tick('yearly', { at: NEW_YEAR })));
    const ran = outcomes.filter((outcome) => outcome.status === 'ran');
    expect(ran).toHaveLength(1);
    // The occurrence is claimed in the store first: the other two find it running, whoever won.
    const reasons = outcomes.map((outcome) => (outcome.status === 'skipped' ? outcome.reason : outcome.status));
    expect(reasons.sort()).toEqual(['already-ran', 'already-ran', 'ran']);
    const run = await store.expectRanOnce('yearly', NEW_YEAR);
    expect(run).toMatchObject({ node: ran[0].node, occurrence: NEW_YEAR, outcome: 'succeeded', attempt: 1 });
  });

  it('"ran once" fails for a job that ran on two nodes', async () => {
    const [a, b] = await startNodes(store, 2);
    expect(await a.tick('unclaimed', { at: NEW_YEAR })).toMatchObject({ status: 'ran', node: 'node-1' });
    expect(await b.tick('unclaimed', { at: NEW_YEAR })).toMatchObject({ status: 'ran', node: 'node-2' });
    const failure = store.expectRanOnce('unclaimed');
    await expect(failure).rejects.toBeInstanceOf(AssertionError);
    await expect(failure).rejects.toThrow(
      'Expected "unclaimed" to run once, but it ran 2 times: on node-1 (attempt 1, succeeded); ' +
        'on node-2 (attempt 1, succeeded)',
    );
  });

  it('"ran once" fails for an occurrence nobody ran', async () => {
    const [node] = await startNodes(store, 1);
    await node.tick('yearly', { at: NEW_YEAR });
    await expect(store.expectRanOnce('yearly', new Date('2028-01-01T00:00:00Z'))).rejects.toThrow(
      'Expected "yearly" to run once for occurrence 2028-01-01T00:00:00.000Z, but it ran 0 times: no run recorded',
    );
  });
});

describe('the other side of a lock', () => {
  it('a lock held as another node skips the tick until it is released', async () => {
    const [node] = await startNodes(store, 1);
    const held = await store.hold('sweep', { as: 'node-9' });
    expect(await node.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked' });
    await expect(store.hold('sweep')).rejects.toThrow('Cannot hold lock "sweep" as another-node: node-9 holds it');
    await held.release();
    expect(await node.tick('sweep')).toMatchObject({ status: 'ran', node: 'node-1' });
  });

  it('a held lock made to expire is taken by the next tick', async () => {
    const [node] = await startNodes(store, 1);
    await store.hold('sweep');
    expect(await node.tick('sweep')).toMatchObject({ status: 'skipped', reason: 'locked' });
    expect(store.expire('sweep')).toBe('another-node');
    expect(await node.tick('sweep')).toMatchObject({ status: 'ran' });
  });

  it('a run whose lock another node takes sees it lost: its signal aborts (not-owner)', async () => {
    // On a fake clock, the renewal (every 100 ms of the 300 ms lease) finds the loss before the lease ends.
    jest.useFakeTimers();
    const [node] = await startNodes(store, 1);
    const started = new Promise<void>((resolve) => {
      const subscription = node.events.events$.subscribe((event) => {
        if (event.type === 'started') resolve(subscription.unsubscribe());
      });
    });
    const running = node.tick('leased');
    await started;
    await store.lose('leased', { as: 'node-2' });
    await jest.advanceTimersByTimeAsync(100);
    const outcome = await running;
    expect(outcome).toMatchObject({ status: 'ran', lost: 'not-owner' });
    expect(handled).toEqual([`leased lost: ${String(new LockLostError('leased', 'not-owner'))}`]);
    expect((await store.runs('leased')).map((run) => run.outcome)).toEqual(['lost']);
  });
});

/** A job on a node that does not lock it: ticking it is refused, since it would not go through a lock. */
@Injectable()
class Unlocked {
  @Cron('0 0 0 1 1 *', { name: 'plain' })
  plain() {}
}

it('tick() refuses a job without @SchedulerLock', async () => {
  const node = await startNode(store, 'node-1', [Unlocked]);
  await expect(node.tick('plain')).rejects.toThrow('No locked job named "plain" on node-1');
});
