import { jest } from '@jest/globals';
import { compileKitNode } from '../support/kit-node.js';
import { Injectable, type Provider } from '@nestjs/common';
import {
  LeaderElection,
  LeaderElections,
  LeadershipEndedError,
  type LeaderLease,
  type OnLeadershipAcquired,
  type OnLeadershipLost,
} from '../../lib/leader/index.js';
import { Cron, Interval, SchedulerRegistry } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import { CronJob } from 'cron';
import {
  InMemoryLockProvider,
  LockedJobRegistry,
  LockingTaskExecutor,
  SCHEDULER_LOCK_PROVIDER,
  SchedulerLock,
  type SchedulerLockModuleOptions,
} from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { parseInvocation } from '../../lib/cli/arguments.js';
import { runCommand } from '../../lib/cli/commands.js';
import { ClusterAdmin } from '../../lib/operators/cluster-admin.js';
import { ElectionAdmin } from '../../lib/operators/election-admin.js';
import { CapturedLogger } from '../support/captured-logger.js';

const store = new TestLockProvider();

/** Every hook call of every node, as `<node> acquired #<token>` or `<node> lost (<reason>)`, in order. */
const calls: string[] = [];
/** The terms that began, with their signals: at most one may be unaborted at any instant. */
const terms: LeaderLease[] = [];
/** Makes `onLeadershipAcquired` throw on these nodes. */
const failingNodes = new Set<string>();

@Injectable()
@LeaderElection('feed', { lease: '3s' })
class FeedConsumer implements OnLeadershipAcquired, OnLeadershipLost {
  onLeadershipAcquired(lease: LeaderLease) {
    assertOneLeader();
    terms.push(lease);
    calls.push(`${lease.node} acquired #${lease.fencingToken}`);
    if (failingNodes.has(lease.node)) throw new Error('the feed refused us');
  }

  onLeadershipLost(lease: LeaderLease) {
    const reason = (lease.signal.reason as LeadershipEndedError).reason;
    calls.push(`${lease.node} lost (${reason})`);
  }
}

/** Kills `node`: its terms end with its process, which the hooks never hear of. */
function kill(node: TestNode): void {
  node.kill();
  terms.splice(0, terms.length, ...terms.filter((term) => term.node !== node.node));
}

function assertOneLeader(): void {
  const leading = terms.filter((term) => !term.signal.aborted).map((term) => term.node);
  if (leading.length > 0) throw new Error(`a new term began while ${leading.join(', ')} still led`);
}

const loggers = new Map<string, CapturedLogger>();
const apps = new Map<string, TestingModule>();

/** A node of the cluster on `store` whose app has the `FeedConsumer`. */
async function start(
  node: string,
  providers: Provider[] = [FeedConsumer],
  options: Partial<SchedulerLockModuleOptions> = {},
): Promise<TestNode> {
  const logger = new CapturedLogger();
  const app = await compileKitNode(store, node, providers, options, logger);
  loggers.set(node, logger);
  apps.set(node, app);
  return SchedulerLockTest.node(app);
}

async function closeNodes(): Promise<void> {
  await Promise.all([...apps.values()].map((app) => app.close()));
  apps.clear();
}

/** Lets the campaigns' attempts and hooks settle at the current fake time. */
const settle = () => jest.advanceTimersByTimeAsync(0);

beforeEach(() => {
  jest.useFakeTimers({ now: new Date('2027-01-01T00:00:00Z') });
});
afterEach(async () => {
  await closeNodes();
  jest.useRealTimers();
  store.reset();
  calls.length = 0;
  terms.length = 0;
  failingNodes.clear();
});

describe('@LeaderElection on the testing kit, on fake time', () => {
  it('makes one node leader, and hands over after a kill within the lease plus one renewal interval', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    expect([a.isLeader('feed'), b.isLeader('feed')]).toEqual([true, false]);

    // The leader renews; node-2 tries about once per second and never gets it while node-1 lives.
    await jest.advanceTimersByTimeAsync(30_000);
    expect(a.isLeader('feed')).toBe(true);
    expect(b.isLeader('feed')).toBe(false);

    kill(a);
    await jest.advanceTimersByTimeAsync(3_000 + 1_000); // the lease, plus one renewal interval
    expect(b.isLeader('feed')).toBe(true);
    expect(calls).toEqual(['node-1 acquired #1', 'node-2 acquired #2']);
  });

  it('a killed leader never overlaps its successor: the successor waits for the lease to expire', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    kill(a);
    await jest.advanceTimersByTimeAsync(2_900);
    expect(b.isLeader('feed')).toBe(false); // node-1's lease still runs in the store
    await jest.advanceTimersByTimeAsync(1_100);
    expect(b.isLeader('feed')).toBe(true);
  });

  it('a clean shutdown steps down and releases: a follower takes over within one interval, not one lease', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    const [lease] = terms;
    await apps.get('node-1')!.close();
    expect(lease.signal.aborted).toBe(true);
    expect(a.isLeader('feed')).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000); // one renewal interval: the 3 s lease would still run
    expect(b.isLeader('feed')).toBe(true);
    expect(calls).toEqual(['node-1 acquired #1', 'node-1 lost (shutdown)', 'node-2 acquired #2']);
  });

  it('the leader loses the lead, its signal aborted, when another node takes the lease from it', async () => {
    const a = await start('node-1');
    await settle();
    const [lease] = terms;
    await store.lose('leader:feed', { as: 'node-9' });
    await jest.advanceTimersByTimeAsync(1_000); // its next renewal finds the lock taken
    expect(lease.signal.aborted).toBe(true);
    expect(lease.signal.reason).toBeInstanceOf(LeadershipEndedError);
    expect(a.isLeader('feed')).toBe(false);
    expect(calls).toEqual(['node-1 acquired #1', 'node-1 lost (not-owner)']);
  });

  it('a hook that throws makes the node step down and release, so another node leads', async () => {
    failingNodes.add('node-1');
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await jest.advanceTimersByTimeAsync(1_000);
    expect(a.isLeader('feed')).toBe(false);
    expect(b.isLeader('feed')).toBe(true);
    expect(calls).toEqual(['node-1 acquired #1', 'node-1 lost (hook-failed)', 'node-2 acquired #2']);
    expect(loggers.get('node-1')!.texts('error').join('\n')).toContain(
      'onLeadershipAcquired failed, stepping down: the feed refused us',
    );
  });

  it('an operator step-down ends the term at once and lets a follower lead, with a greater fencing token', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    expect(await a.get(LeaderElections).stepDown('feed')).toBe(true);
    expect(await b.get(LeaderElections).stepDown('feed')).toBe(false); // a follower has nothing to step down from
    await jest.advanceTimersByTimeAsync(1_000);
    expect(b.isLeader('feed')).toBe(true);
    expect(calls).toEqual(['node-1 acquired #1', 'node-1 lost (stepped-down)', 'node-2 acquired #2']);
  });
});

describe('the cost of an election', () => {
  it('a follower tries to lead about once per renewal interval, never more', async () => {
    await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    const lock = jest.spyOn(b.get<InMemoryLockProvider>(SCHEDULER_LOCK_PROVIDER), 'lock');
    await jest.advanceTimersByTimeAsync(30_000); // 30 renewal intervals of the 3 s lease
    expect(lock.mock.calls.length).toBeGreaterThanOrEqual(30);
    expect(lock.mock.calls.length).toBeLessThanOrEqual(40);
  });

  it("the leader's lease rides in the node's lease batch: one renewal call carries it with a running job's lease", async () => {
    const a = await start('node-1');
    await settle();
    const provider = a.get<InMemoryLockProvider>(SCHEDULER_LOCK_PROVIDER);
    const renewLeases = jest.spyOn(provider, 'renewLeases');
    let finish = () => {};
    const running = a
      .get(LockingTaskExecutor)
      .executeWithLock(() => new Promise<void>((resolve) => (finish = resolve)), {
        name: 'report',
        lockAtMostFor: '1m',
        keepAlive: { lease: '3s' },
      });
    await jest.advanceTimersByTimeAsync(10_000);
    const names = renewLeases.mock.calls.map(([renewals]) =>
      renewals.map(({ lock }) => lock.configuration!.name).sort(),
    );
    expect(names.length).toBeGreaterThanOrEqual(9);
    expect(names.slice(1)).toEqual(names.slice(1).map(() => ['leader:feed', 'report']));
    finish();
    expect(await running).toMatchObject({ executed: true });
  });
});

/** Jobs on the leader of the module's default election, `scheduler`, and one that opts out. */
@Injectable()
class LeaderJobs {
  @SchedulerLock()
  @Cron('0 0 * * * *', { name: 'hourly', timeZone: 'UTC' })
  hourly() {}

  @SchedulerLock({ leader: false, occurrence: false })
  @Cron('0 0 * * * *', { name: 'anywhere', timeZone: 'UTC' })
  anywhere() {}

  @SchedulerLock({ leader: 'feed' })
  @Interval('poll', 3_600_000)
  poll() {}
}

describe('jobs that run on the leader', () => {
  const onLeader = { defaultLeader: 'scheduler' };
  const HOUR = new Date('2027-01-01T01:00:00Z');

  it('followers skip their ticks (follower) without a store call; the leader runs them', async () => {
    const a = await start('node-1', [LeaderJobs], onLeader);
    await settle();
    const b = await start('node-2', [LeaderJobs], onLeader);
    await settle();
    const provider = b.get<InMemoryLockProvider>(SCHEDULER_LOCK_PROVIDER);
    const storeCalls = (['lock', 'lockJob', 'lockOccurrence'] as const).map((method) => jest.spyOn(provider, method));

    expect(await b.tick('hourly', { at: HOUR })).toMatchObject({ status: 'skipped', reason: 'follower' });
    expect(await b.tick('poll')).toMatchObject({ status: 'skipped', reason: 'follower' });
    for (const call of storeCalls) expect(call).not.toHaveBeenCalled();
    expect(await a.tick('hourly', { at: HOUR })).toMatchObject({ status: 'ran', node: 'node-1' });
    expect(await a.tick('poll')).toMatchObject({ status: 'ran', node: 'node-1' });
    // leader: false runs wherever a tick takes the lock.
    expect(await b.tick('anywhere')).toMatchObject({ status: 'ran', node: 'node-2' });
  });

  it("counts no follower's skip in the store, so the store's work does not grow with the nodes", async () => {
    await start('node-1', [LeaderJobs], onLeader);
    await settle();
    const b = await start('node-2', [LeaderJobs], onLeader);
    await settle();
    const held = await store.hold('anywhere', { as: 'node-9' });
    expect(await b.tick('poll')).toMatchObject({ status: 'skipped', reason: 'follower' });
    expect(await b.tick('anywhere')).toMatchObject({ status: 'skipped', reason: 'locked' });
    await held.release();
    await b.publish(); // a heartbeat: the node sends the skips it counted
    expect((await b.admin.getJob('poll')).skips).toEqual({});
    expect((await b.admin.getJob('anywhere')).skips).toEqual({ locked: 1 });
  });

  it('an occurrence the old leader ran is not run again by the new leader after the handover', async () => {
    const a = await start('node-1', [LeaderJobs], onLeader);
    await settle();
    const b = await start('node-2', [LeaderJobs], onLeader);
    await settle();
    expect(await a.tick('hourly', { at: HOUR })).toMatchObject({ status: 'ran', node: 'node-1' });
    a.kill();
    await jest.advanceTimersByTimeAsync(30_000 + 10_000); // the default 30 s lease, plus one renewal interval
    expect(b.isLeader('scheduler')).toBe(true);
    expect(await b.tick('hourly', { at: HOUR })).toMatchObject({ status: 'skipped', reason: 'already-ran' });
    expect(await b.tick('hourly', { at: new Date('2027-01-01T02:00:00Z') })).toMatchObject({ status: 'ran' });
    await store.expectRanOnce('hourly', HOUR);
  });

  it('an occurrence due during a handover runs nowhere, and job health reports it missed, once', async () => {
    // A 5 s job on the leader of `feed` (3 s lease); the crons fire on the fake clock.
    @Injectable()
    class FeedJobs {
      @SchedulerLock({ leader: 'feed' })
      @Cron('*/5 * * * * *', { name: 'every-5s', timeZone: 'UTC' })
      every5s() {}
    }
    const at = (seconds: number) => new Date(Date.parse('2027-01-01T00:00:00Z') + seconds * 1_000);
    const options = { health: { grace: '500ms' } };
    const a = await start('node-1', [FeedConsumer, FeedJobs], options);
    await settle();
    const b = await start('node-2', [FeedConsumer, FeedJobs], options);
    const seen: string[] = [];
    for (const node of [a, b]) {
      node.events.events$.subscribe((event) => {
        if (event.type === 'missed') seen.push(`${event.node} missed ${event.occurrences.map((o) => o.toISOString())}`);
      });
    }
    await jest.advanceTimersByTimeAsync(9_500);
    kill(a); // renewed at 9 s: its lease runs until 12 s, so node-2 leads from 12 to 13 s, after the 10 s tick
    await jest.advanceTimersByTimeAsync(6_000);
    expect(b.isLeader('feed')).toBe(true);

    expect((await store.runs('every-5s')).map((run) => [run.node, run.occurrence])).toEqual([
      ['node-1', at(5)],
      ['node-2', at(15)],
    ]);
    const [health] = await b.checkHealth();
    expect(health).toMatchObject({ jobName: 'every-5s', state: 'on-time', missed: [at(10)] });
    await a.checkHealth();
    // One node reports it, at its own check or at one of the nodes' checks every heartbeatInterval.
    expect(seen).toEqual([expect.stringMatching(new RegExp(`^node-[12] missed ${at(10).toISOString()}$`))]);
  });

  it('a job declared at runtime, after startup, makes the node take part in its election and runs on its leader', async () => {
    const a = await start('node-1', [], onLeader);
    const b = await start('node-2', [], onLeader);
    await settle();
    for (const node of [a, b]) {
      node.get(LockedJobRegistry).declare('late-sweep');
      const job = CronJob.from({ cronTime: '0 0 * * * *', onTick: () => {}, start: false, timeZone: 'UTC' });
      node.get(SchedulerRegistry).addCronJob('late-sweep', job);
      job.start();
    }
    await settle();
    expect([a.isLeader('scheduler'), b.isLeader('scheduler')]).toEqual([true, false]);
    expect(await b.tick('late-sweep', { at: HOUR })).toMatchObject({ status: 'skipped', reason: 'follower' });
    expect(await a.tick('late-sweep', { at: HOUR })).toMatchObject({ status: 'ran', node: 'node-1' });
  });

  it("refuses a leader that is no election's name, naming the job and the value", async () => {
    @Injectable()
    class BadLeader {
      @SchedulerLock({ leader: '' })
      @Cron('0 0 * * * *', { name: 'bad', timeZone: 'UTC' })
      bad() {}
    }
    await expect(start('node-1', [BadLeader])).rejects.toThrow(/leader must be an election's name or false \(got ""\)/);
  });
});

describe('operators', () => {
  it("show each election's leader, term and since when, and make the leader step down from another node", async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    expect(await b.admin.election('feed')).toEqual({
      election: 'feed',
      leader: 'node-1',
      term: 1,
      since: new Date('2027-01-01T00:00:00Z'),
    });

    const stepping = b.admin.stepDown('feed', { actor: 'ops', reason: 'moving the feed off node-1' });
    await jest.advanceTimersByTimeAsync(1_000); // node-1 takes the request at its next look for triggers
    expect(await stepping).toEqual({ steppedDown: true, formerLeader: 'node-1' });
    expect(a.isLeader('feed')).toBe(false);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(b.isLeader('feed')).toBe(true);
    expect(calls).toEqual(['node-1 acquired #1', 'node-1 lost (stepped-down)', 'node-2 acquired #2']);
    expect(await a.admin.election('feed')).toMatchObject({ leader: 'node-2', term: 2 });
    expect(await a.admin.electionHistory('feed')).toEqual([
      expect.objectContaining({ type: 'trigger', actor: 'ops', reason: 'moving the feed off node-1' }),
    ]);
  });

  it('lists the elections the live nodes take part in, from their heartbeats', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2', [LeaderJobs], { defaultLeader: 'scheduler' });
    await settle();
    await Promise.all([a.publish(), b.publish()]);
    const since = new Date('2027-01-01T00:00:00Z');
    expect(await b.admin.listElections()).toEqual([
      { election: 'feed', leader: 'node-1', term: 1, since },
      { election: 'scheduler', leader: 'node-2', term: expect.any(Number), since },
    ]);
    const nodes = await a.admin.listNodes();
    expect(nodes.map((node) => [node.node, [...node.elections].sort()])).toEqual([
      ['node-1', ['feed']],
      ['node-2', ['feed', 'scheduler']],
    ]);
  });

  it('a step-down with no leader is refused and recorded nowhere', async () => {
    const a = await start('node-1', [LeaderJobs]);
    expect(await a.admin.election('feed')).toEqual({ election: 'feed', leader: null, term: null, since: null });
    expect(await a.admin.stepDown('feed', { actor: 'ops' })).toEqual({ steppedDown: false, reason: 'no-leader' });
    expect(await a.admin.electionHistory('feed')).toEqual([]);
  });
});

describe('the CLI', () => {
  async function cli(node: TestNode, args: string[]) {
    const invocation = parseInvocation(args, { REDIS_URL: 'redis://127.0.0.1:6379' });
    if (invocation === 'help') throw new Error('help asked');
    const store = node.get<InMemoryLockProvider>(SCHEDULER_LOCK_PROVIDER).operatorProvider();
    const admin = new ClusterAdmin(store, 5_000);
    return runCommand(admin, new ElectionAdmin(store, admin), invocation, 'test store');
  }

  it('shows the leader, term and since when, and makes the leader step down with a reason', async () => {
    const a = await start('node-1');
    await settle();
    const b = await start('node-2');
    await settle();
    const shown = await cli(b, ['election', 'feed']);
    expect(shown.text.split('\n')).toEqual([
      'election: feed',
      'leader:   node-1',
      'term:     1',
      'since:    2027-01-01T00:00:00.000Z (now)',
    ]);

    await Promise.all([a.publish(), b.publish()]);
    expect((await cli(b, ['elections'])).text.split('\n')).toEqual([
      'ELECTION  LEADER  TERM  SINCE',
      'feed      node-1  1     now',
    ]);

    const stepping = cli(b, ['step-down', 'feed', '--actor', 'ops', '--reason', 'drain node-1']);
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await stepping).toMatchObject({ text: 'node-1 stepped down from feed: another node leads next.' });
    expect(a.isLeader('feed')).toBe(false);
    expect(await cli(b, ['step-down', 'feed', '--actor', 'ops'])).toMatchObject({
      failure: 'feed did not step down: no node leads it',
    });
  });
});
