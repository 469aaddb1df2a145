import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import { filter, firstValueFrom } from 'rxjs';
import { SchedulerLock, type LockEvent } from '../../lib/index.js';
import { TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { closeNodes, handled, NEW_YEAR, runtimeSweep, startNode } from './cluster-kit.js';

const HOUR = 3_600_000;

/** Decorated jobs that return what they did, and one that fails. */
@Injectable()
class Reports {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('0 0 0 1 1 *', { name: 'yearly-report', timeZone: 'UTC' })
  yearly() {
    return { rows: 12 };
  }

  @SchedulerLock({ lockAtMostFor: '1m' })
  @Interval('hourly-report', HOUR)
  async hourly() {
    handled.push('hourly-report');
    return 'sent';
  }

  @SchedulerLock({ lockAtMostFor: '1m' })
  @Timeout('warm-up-report', 60_000)
  warmUp() {
    handled.push('warm-up-report');
    return 42;
  }

  @SchedulerLock({ lockAtMostFor: '1m' })
  @Interval('failing-report', HOUR)
  async failing() {
    throw new Error('the printer is on fire');
  }
}

const store = new TestLockProvider();
afterEach(async () => {
  jest.useRealTimers();
  await closeNodes();
  store.reset();
});

/** The next event of `type` for `jobName` (no timeout of its own: a fake clock would fire it). */
function next(node: TestNode, type: LockEvent['type'], jobName: string): Promise<LockEvent> {
  return firstValueFrom(node.events.events$.pipe(filter((event) => event.type === type && event.jobName === jobName)));
}

describe('fake timers installed before the app starts', () => {
  beforeEach(() => jest.useFakeTimers({ now: NEW_YEAR.getTime() + 1_000 }));

  it('tick() runs a locked @Interval and @Timeout, and the console knows their schedules', async () => {
    const node = await startNode(store, 'node-1', [Reports]);
    expect(await node.tick('hourly-report')).toMatchObject({ status: 'ran', node: 'node-1', failed: false });
    expect(await node.tick('warm-up-report')).toMatchObject({ status: 'ran', node: 'node-1', failed: false });
    expect(handled).toEqual(['hourly-report', 'warm-up-report']);
    // The console has their schedules, which a fake timer does not keep where Node's timers do.
    expect(await node.admin.getJob('hourly-report')).toMatchObject({ kind: 'interval', schedule: 'every 3600000 ms' });
    expect(await node.admin.getJob('warm-up-report')).toMatchObject({
      kind: 'timeout',
      schedule: 'once after 60000 ms',
    });
  });

  it('advancing the fake clock fires the locked interval and timeout, each tick under its lock', async () => {
    const node = await startNode(store, 'node-1', [Reports]);
    const warmedUp = next(node, 'released', 'warm-up-report');
    await jest.advanceTimersByTimeAsync(60_000);
    await warmedUp;
    const ran = next(node, 'released', 'hourly-report');
    await jest.advanceTimersByTimeAsync(HOUR - 60_000);
    await ran;
    expect(handled).toEqual(['warm-up-report', 'hourly-report']);
    expect(await store.expectRanOnce('hourly-report')).toMatchObject({ node: 'node-1', outcome: 'succeeded' });
    // Held elsewhere, the next tick the fake clock fires is skipped: the timer calls the locked tick.
    const held = await store.hold('hourly-report', { as: 'node-2' });
    const skipped = next(node, 'skipped', 'hourly-report');
    await jest.advanceTimersByTimeAsync(HOUR);
    expect(await skipped).toMatchObject({ reason: 'locked' });
    expect(handled).toEqual(['warm-up-report', 'hourly-report']);
    await held.release();
  });

  it('refuses a locked timer the app adds itself, naming the job', async () => {
    await expect(startNode(store, 'node-1', [runtimeSweep(() => handled.push('runtime-sweep'))])).rejects.toThrow(
      'Cannot lock job "runtime-sweep" (runtime job "runtime-sweep"): the timer is not a Node.js Timeout: a timer ' +
        'added with addInterval or addTimeout is locked through its Node.js callback, which a fake timer lacks ' +
        '(install fake timers once it is added;',
    );
  });
});

describe("a decorated method's outcome", () => {
  it('its return value, awaited, is the result of a @Cron, @Interval or @Timeout tick', async () => {
    const node = await startNode(store, 'node-1', [Reports]);
    expect(await node.tick('yearly-report', { at: NEW_YEAR })).toMatchObject({ status: 'ran', result: { rows: 12 } });
    expect(await node.tick('hourly-report')).toMatchObject({ status: 'ran', result: 'sent' });
    expect(await node.tick('warm-up-report')).toMatchObject({ status: 'ran', result: 42 });
  });

  it('what it throws is the error of a failed tick, logged once', async () => {
    jest.useFakeTimers({ now: NEW_YEAR }); // before the start: the failing job is an @Interval
    const logger = new CapturedLogger();
    const node = await startNode(store, 'node-1', [Reports], logger);
    const outcome = await node.tick('failing-report');
    expect(outcome).toMatchObject({ status: 'ran', failed: true, error: new Error('the printer is on fire') });
    expect(outcome).toMatchObject({ result: null });
    await jest.advanceTimersByTimeAsync(0); // lets the tick's promise chain end: the tick logs the failure last
    expect(logger.texts('error').filter((text) => text === 'the printer is on fire')).toHaveLength(1);
    expect((await store.runs('failing-report')).map((run) => run.outcome)).toEqual(['failed']);
  });
});
