import { Injectable } from '@nestjs/common';
import { Cron, Interval, Timeout } from '@nestjs/schedule';
import {
  currentLock,
  LockingTaskExecutor,
  SchedulerLock,
  SchedulerLockAdmin,
  type LockEvent,
} from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';
import { countStatements } from './statement-counter.js';

/** What a locked run saw of its lock. */
interface SeenRun {
  readonly fencingToken?: number;
  readonly occurrence?: number;
}

function seen(): SeenRun {
  const lock = currentLock()!;
  return {
    fencingToken: lock.fencingToken ?? undefined,
    occurrence: lock.occurrence?.getTime(),
  };
}

@Injectable()
class EveryKind {
  readonly runs = new Map<string, SeenRun[]>();
  @Cron('* * * * * *')
  @SchedulerLock({ name: 'pg-cron' })
  cron() {
    this.record('cron');
  }
  @Interval(200)
  @SchedulerLock({ name: 'pg-interval' })
  interval() {
    this.record('interval');
  }
  @Timeout(0)
  @SchedulerLock({ name: 'pg-timeout' })
  timeout() {
    this.record('timeout');
  }
  private record(kind: string) {
    this.runs.set(kind, [...(this.runs.get(kind) ?? []), seen()]);
  }
}

describe('scheduled jobs on PostgreSQL, through the module', () => {
  let fixture: PostgresFixture;
  beforeEach(async () => {
    fixture = await postgresFixture('module-jobs');
  });
  afterEach(async () => {
    await closeSchedulerApps();
    await fixture.close();
  });

  function start(providers: (new (...args: never[]) => unknown)[], node = 'node-a') {
    const provider = fixture.connect({ node: node });
    return startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '10s', node: node }, providers });
  }

  it('runs @Cron (once per occurrence), @Interval and @Timeout jobs under their locks, and releases them', async () => {
    const app = await start([EveryKind]);
    await Promise.all(
      ['EveryKind.cron', 'EveryKind.timeout'].map((job) => nextEvent(app.history$, jobEvent('released', job))),
    );
    await events(app.history$, jobEvent('released', 'EveryKind.interval'), 2);

    const runs = app.get(EveryKind).runs;
    expect(runs.get('timeout')).toEqual([expect.objectContaining({ fencingToken: expect.any(Number) })]);
    const [first, second] = runs.get('interval')!;
    expect(second.fencingToken).toBeGreaterThan(first.fencingToken!);
    const [cron] = runs.get('cron')!;
    expect(cron.occurrence! % 1_000).toBe(0);
    const history = await app.get(SchedulerLockAdmin).history('EveryKind.cron');
    expect(
      history.find((entry) => entry.type === 'run' && entry.occurrence?.getTime() === cron.occurrence),
    ).toMatchObject({
      outcome: 'succeeded',
      node: 'node-a',
    });
    // Released on the database's clock: no row of a finished run is still held.
    const { rows } = await fixture.admin.query<{ name: string; held: boolean }>(
      `SELECT name, lock_until > clock_timestamp() AS held FROM "${fixture.schema}".scheduler_lock_locks
       WHERE name = 'pg-timeout'`,
    );
    expect(rows).toEqual([{ name: 'pg-timeout', held: false }]);
    expect(app.logs.texts('error')).toEqual([]);
  });

  it('renews the keepAlive leases of a node in one statement per interval, and no other node takes them', async () => {
    const node = fixture.connect({ node: 'node-a' });
    const rival = fixture.connect({ node: 'node-b' });
    const app = await startSchedulerApp({ lock: { provider: node, defaultLockAtMostFor: '1m' }, providers: [] });
    const executor = app.get(LockingTaskExecutor);
    const lease = 600;
    const renewals: LockEvent[] = [];
    const subscription = app.events$.subscribe((event) => event.type === 'extended' && renewals.push(event));
    const statements = countStatements(fixture.poolOf(node));
    const stolen: boolean[] = [];
    const run = (name: string) =>
      executor.executeWithLock(
        async () => {
          const until = performance.now() + 3 * lease;
          while (performance.now() < until) {
            stolen.push((await rival.lock({ name, lockAtMostFor: 10_000, lockAtLeastFor: 0 })) !== undefined);
            await new Promise((resolve) => setTimeout(resolve, lease / 4));
          }
        },
        { name, lockAtMostFor: '1m', keepAlive: { lease } },
      );
    const results = await Promise.all(['lease-1', 'lease-2', 'lease-3'].map(run));
    subscription.unsubscribe();

    expect(results.every((result) => result.executed)).toBe(true);
    expect(stolen).not.toContain(true);
    expect(renewals.length).toBeGreaterThanOrEqual(3 * 5);
    // Three leases renewed together: a third as many statements as renewals, give or take a round.
    expect(statements.renewals()).toBeLessThanOrEqual(renewals.length / 3 + 2);
  });
});
