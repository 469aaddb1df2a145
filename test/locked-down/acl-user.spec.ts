import { jest } from '@jest/globals';
import { readFile } from 'node:fs/promises';
import { Injectable } from '@nestjs/common';
import { Cron, Interval } from '@nestjs/schedule';
import { Redis } from 'ioredis';
import {
  currentLock,
  LockedJobRegistry,
  LockEvents,
  LockProviderUnavailableError,
  SchedulerLock,
  SchedulerLockAdmin,
  type LockContext,
} from '../../lib/index.js';
import type { RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { type LockConfiguration } from '../../lib/provider/index.js';
import { ClusterAdmin } from '../../lib/provider/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { recordCommands } from '../support/redis-monitor.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { deferred, waitUntil } from '../support/wait-until.js';
import { HOUR_MS, hourStartWithRoom } from '../support/timing.js';
import {
  everythingSaid,
  expectStartupRefused,
  expectTicksSkippedWithOneLine,
  IntervalJob,
  refusedStartup,
} from './skipped-ticks.js';
import {
  aclRefusals,
  CONNECTION_COMMANDS,
  LOCK_USER,
  LOCK_USER_COMMANDS,
  lockUserRules,
  setLockUser,
} from './lock-user.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const ADMIN_PASSWORD = 'admin-secret';
const LEASE = 300;

const redis = usePrivateRedisServer({ requirepass: ADMIN_PASSWORD });
let keyPrefix: string;
const clients: Redis[] = [];

beforeEach(async () => {
  keyPrefix = uniquePrefix('locked-down');
  // Each test starts with every script unknown to the server, so the EVAL fallback is exercised too.
  await redis.admin.script('FLUSH');
  await redis.admin.call('ACL', 'LOG', 'RESET');
});
afterEach(async () => {
  await closeSchedulerApps();
  clients.splice(0).forEach((client) => client.disconnect());
});

/** The lock user's URL: the module creates its client from it, and closes it. */
function lockUserUrl(): string {
  return `redis://${LOCK_USER.name}:${LOCK_USER.password}@127.0.0.1:${redis.server.port}`;
}

/** A client of the test's own, authenticated as the lock user. */
function lockUserClient(): Redis {
  const client = new Redis(lockUserUrl(), { maxRetriesPerRequest: 1 });
  clients.push(client);
  return client;
}

/** The refusals in ACL LOG, but for ioredis's CLIENT SETINFO, which Redis 7.2+ refuses and ioredis ignores. */
async function refusalsOfLockCommands() {
  return (await aclRefusals(redis.admin)).filter(({ object }) => object !== 'client|setinfo');
}

@Injectable()
class LockedDownJobs {
  readonly renewedRun = deferred<LockContext>();
  readonly caughtUpRun = deferred<LockContext>();
  readonly recoveredRun = deferred<LockContext>();
  readonly extendedRun = deferred<LockContext>();

  constructor(private readonly lockEvents: LockEvents) {}

  /** A cron occurrence whose run outlasts a lease renewal, then is released (DEL) and recorded. */
  @SchedulerLock({ name: 'renewing', keepAlive: { lease: LEASE } })
  @Cron('* * * * * *')
  async renewing() {
    const lock = currentLock()!;
    await nextEvent(
      this.lockEvents.events$,
      (event) => event.type === 'extended' && event.lockName === 'renewing' && event.fencingToken === lock.fencingToken,
    );
    this.renewedRun.resolve(lock);
  }

  /** A plain lock, extended inside its run, and kept for lockAtLeastFor after it (PEXPIRE). */
  @SchedulerLock({ name: 'interval', lockAtLeastFor: '50ms' })
  @Interval(100)
  async interval() {
    await currentLock()!.extend('5s');
    this.extendedRun.resolve(currentLock()!);
  }

  /** Hourly: during a test only the catch-up of the hour the cluster "missed" runs it. */
  @SchedulerLock({ name: 'hourly', catchUp: { window: '2h' } })
  @Cron('0 0 * * * *')
  hourly() {
    this.caughtUpRun.resolve(currentLock()!);
  }

  /** Re-run when the node running an occurrence dies. */
  @SchedulerLock({ name: 'rerun', onCrash: 'rerun', recoveryGrace: '100ms', keepAlive: { lease: LEASE } })
  @Cron('*/3 * * * * *')
  rerun() {
    const lock = currentLock()!;
    if (lock.recovery) this.recoveredRun.resolve(lock);
  }
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

const lockConfiguration = (name: string, lockAtMostFor = 10_000, lockAtLeastFor = 0): LockConfiguration => ({
  name,
  lockAtMostFor,
  lockAtLeastFor,
});

/**
 * Every kind of call RedisLockProvider makes, each checked to have done its job, in an order where a
 * withheld command makes the first call that needs it fail.
 */
async function useEveryProviderCall(provider: RedisLockProvider): Promise<void> {
  const kept = await provider.lock(lockConfiguration('kept', 10_000, 5_000));
  await kept!.unlock(); // kept for lockAtLeastFor: PEXPIRE

  const plain = await provider.lock(lockConfiguration('plain'));
  const extended = await plain!.extend(10_000, 0);
  expect(extended).toBeDefined();
  await extended!.unlock(); // DEL

  const leased = await provider.lock(lockConfiguration('leased'));
  expect(await provider.renewLeases([{ lock: leased!, ttl: 10_000 }])).toEqual(['renewed']);
  await leased!.unlock();

  const claim = await provider.lockOccurrence(lockConfiguration('occurrence'), new Date(1_000));
  if (!('lock' in claim)) throw new Error(`occurrence not claimed: ${JSON.stringify(claim)}`);
  await claim.lock.finish!('succeeded');

  // A run whose node died: its 1 ms lock is gone, its record says running; with no grace it is taken over at once.
  const died = await provider.lockOccurrence(lockConfiguration('died', 1), new Date(1_000));
  expect('lock' in died).toBe(true);
  await waitUntil(
    async () => (await redis.admin.exists(provider.lockKey('died'))) === 0,
    'the dead run’s lock expired',
  );
  const recovered = await provider.recoverOccurrence(lockConfiguration('died'), new Date(1_000), 2, 0);
  if (!('lock' in recovered)) throw new Error(`occurrence not recovered: ${JSON.stringify(recovered)}`);
  await recovered.lock.finish!('succeeded');

  expect(await provider.readJobRecord('died')).toMatchObject({ state: 'succeeded', attempt: 2, held: false });

  // A job's run, recorded in its history; then what operators do (the admin service, the CLI).
  const job = await provider.lockJob(lockConfiguration('job'), false);
  if (!('lock' in job)) throw new Error(`job not locked: ${JSON.stringify(job)}`);
  await job.lock.finish!('succeeded', { startedAt: new Date(), durationMs: 1, attempt: 1 });
  const store = provider.operatorProvider();
  const node = {
    node: 'node-a',
    version: '0',
    startedAt: new Date(),
    lastSeen: new Date(),
    jobs: ['job'],
    elections: [],
  };
  const entry = { jobName: 'job', lockName: 'job', kind: 'interval', schedule: '100', occurrence: false } as const;
  const unset = { timeZone: null, lease: null };
  const skips = new Map([['job', new Map([['locked', 1] as const])]]);
  await store.publish(node, [{ ...entry, ...unset, lockAtMostFor: 10_000, lockAtLeastFor: 0 }], skips, {
    lease: 1,
    unhealthy: {},
  });
  const admin = new ClusterAdmin(store, 60_000);
  expect(await admin.getJob('job')).toMatchObject({ lastRun: { outcome: 'succeeded' }, skips: { locked: 1 } });
  const note = { actor: 'ops' };
  expect(await admin.pause('job', note)).toBe(true);
  expect(await admin.resume('job', note)).toBe(true);
  const held = await provider.lockJob(lockConfiguration('job'), false);
  expect(await admin.unlock('job', note)).toEqual({ formerNode: provider.node });
  expect('lock' in held).toBe(true);
  const { request } = await store.requestTrigger('job', 'job', note);
  expect(await store.withdrawTrigger('job', request.id)).toBe(true);
  const { request: again } = await store.requestTrigger('job', 'job', note);
  expect(await store.takeTriggers(new Set(['job']))).toMatchObject([{ id: again.id }]);
}

describe('a Redis user allowed only the lock commands, on the key prefix only', () => {
  it('runs cron, interval, runtime, catch-up, crash re-run and keepAlive jobs and the status API; sends exactly those commands', async () => {
    await setLockUser(redis.admin, keyPrefix);
    const recorder = await recordCommands(redis.admin, { includeScripts: true });
    const crashedNode = new RedisLockProvider(lockUserClient(), { keyPrefix, node: 'crashed-node' });
    // The hourly job last ran the hour before the last: the cluster was down at the last one.
    const lastHour = await hourStartWithRoom();
    const ranBefore = await crashedNode.lockOccurrence(lockConfiguration('hourly'), new Date(lastHour - HOUR_MS));
    if ('lock' in ranBefore) await ranBefore.lock.finish!('succeeded');
    // A node took the rerun job's next occurrence and died: its lock expires, its record says running.
    const dueAt = Math.ceil((Date.now() + 1_000) / 3_000) * 3_000;
    expect('lock' in (await crashedNode.lockOccurrence(lockConfiguration('rerun', 100), new Date(dueAt)))).toBe(true);

    const app = await startSchedulerApp({
      lock: {
        redis: lockUserUrl(),
        keyPrefix,
        defaultLockAtMostFor: '10s',
        node: 'node-a',
        heartbeatInterval: '100ms',
      },
      providers: [LockedDownJobs],
    });
    const jobs = app.get(LockedDownJobs);
    app.get(LockedJobRegistry).declare('runtime-interval');
    const runtimeRuns: (string | undefined)[] = [];
    app.registry.addInterval(
      'runtime-interval',
      setInterval(() => runtimeRuns.push(currentLock()?.name), 100),
    );

    const [renewed, extended, caughtUp, recovered] = await Promise.all(
      [jobs.renewedRun, jobs.extendedRun, jobs.caughtUpRun, jobs.recoveredRun].map(({ promise }) => promise),
    );
    await Promise.all(
      ['LockedDownJobs.renewing', 'LockedDownJobs.interval', 'LockedDownJobs.hourly', 'runtime-interval'].map((job) =>
        nextEvent(app.history$, jobEvent('released', job)),
      ),
    );
    // What operators do, through the admin service: read, pause (ticks skipped and counted), resume, trigger.
    const admin = app.get(SchedulerLockAdmin);
    const note = { actor: 'ops' };
    await waitUntil(async () => (await admin.listJobs()).length === 5, 'the node published its jobs');
    await admin.pause('LockedDownJobs.interval', note);
    await nextEvent(app.events$, (event) => event.type === 'skipped' && event.reason === 'paused');
    await waitUntil(async () => (await admin.getJob('LockedDownJobs.interval')).skips.paused > 0, 'skips counted');
    await admin.resume('LockedDownJobs.interval', note);
    expect(await admin.trigger('LockedDownJobs.hourly', note)).toMatchObject({ result: { state: 'started' } });
    const runs = async (job: string) =>
      (await admin.history(job, 50)).filter((entry): entry is RunHistoryEntry => entry.type === 'run');
    // The renewing job's first run (the oldest entry), and the hourly job's catch-up run.
    const renewingRun = (await runs('LockedDownJobs.renewing')).at(-1);
    const hourlyRun = (await runs('LockedDownJobs.hourly')).find((run) => run.occurrence?.getTime() === lastHour);
    await app.close();
    const sent = await recorder.take();
    await recorder.close();

    expect(renewed).toMatchObject({ name: 'renewing', occurrence: expect.any(Date) });
    expect(extended.name).toBe('interval');
    expect(caughtUp).toMatchObject({ name: 'hourly', catchUp: true, occurrence: new Date(lastHour) });
    expect(recovered).toMatchObject({
      name: 'rerun',
      occurrence: new Date(dueAt),
      recovery: { attempt: 2, previousNode: 'crashed-node' },
    });
    expect(runtimeRuns).toContain('runtime-interval');
    expect(renewingRun).toMatchObject({ outcome: 'succeeded', node: 'node-a', attempt: 1 });
    expect(hourlyRun).toMatchObject({ outcome: 'succeeded', node: 'node-a', attempt: 1 });
    expect(app.logs.texts('error')).toEqual([]);
    expect(await refusalsOfLockCommands()).toEqual([]);
    // Every command of the list was sent (by a client or a script), and nothing else but the connection's own.
    const connection: readonly string[] = CONNECTION_COMMANDS;
    expect([...new Set(sent)].filter((command) => !connection.includes(command)).sort()).toEqual(
      [...LOCK_USER_COMMANDS].sort(),
    );
  });

  it('lets the provider make every kind of call, refusing none', async () => {
    await setLockUser(redis.admin, keyPrefix);

    await useEveryProviderCall(new RedisLockProvider(lockUserClient(), { keyPrefix }));

    expect(await refusalsOfLockCommands()).toEqual([]);
  });

  it('with minReplicasToAck needs wait besides: refused without it (the lock given back), asked with it', async () => {
    const configuration: LockConfiguration = { name: 'acked', lockAtMostFor: HOUR_MS, lockAtLeastFor: 0 };
    const options = { keyPrefix, minReplicasToAck: 1, replicaAckTimeout: 50 };
    await setLockUser(redis.admin, keyPrefix);

    const refused = await new RedisLockProvider(lockUserClient(), options).lock(configuration).catch((e: Error) => e);

    expect(refused).toBeInstanceOf(LockProviderUnavailableError);
    expect((refused as Error).message).toMatch(/ refused WAIT for user "locks": NOPERM /);
    expect(await refusalsOfLockCommands()).toEqual([expect.objectContaining({ object: 'wait' })]);
    await waitUntil(async () => (await redis.admin.exists(`${keyPrefix}:{acked}`)) === 0, 'the lock is given back');

    await redis.admin.call('ACL', 'LOG', 'RESET');
    await setLockUser(redis.admin, keyPrefix, [...LOCK_USER_COMMANDS, 'wait']);
    const asked = await new RedisLockProvider(lockUserClient(), options).lock(configuration).catch((e: Error) => e);

    // This server has no replica: WAIT answers 0, which is no refusal.
    expect((asked as LockProviderUnavailableError).reason).toBe('0 of 1 replicas acknowledged the lock within 50ms');
    expect(await refusalsOfLockCommands()).toEqual([]);
  });

  it.each(LOCK_USER_COMMANDS.filter((command) => command !== 'info'))(
    'needs %s: without it a call fails with a refusal naming the endpoint, the command and the user',
    async (withheld) => {
      await setLockUser(
        redis.admin,
        keyPrefix,
        LOCK_USER_COMMANDS.filter((command) => command !== withheld),
      );

      const failure = await useEveryProviderCall(new RedisLockProvider(lockUserClient(), { keyPrefix })).then(
        () => new Error('every call succeeded'),
        (error: Error) => error,
      );

      expect(await refusalsOfLockCommands()).toEqual([
        expect.objectContaining({ object: withheld, username: LOCK_USER.name }),
      ]);
      expect(failure).toBeInstanceOf(LockProviderUnavailableError);
      // A command a script runs is named among the script's commands: Redis's reply does not say which.
      const named = withheld.toUpperCase();
      const runs = '[\\w-]+\\.lua runs';
      const refused = `(${named}|${named} \\(run by [\\w-]+\\.lua\\)|a command ${runs} \\(one of ([A-Z]+, )*${named}(, [A-Z]+)*\\))`;
      expect(failure.message).toMatch(
        new RegExp(`^Redis 127\\.0\\.0\\.1:${redis.server.port} refused ${refused} for user "locks": (NOPERM|ERR) `),
      );
    },
  );

  it('needs info: without it ioredis skips its ready check, with a warning on every connection', async () => {
    await setLockUser(
      redis.admin,
      keyPrefix,
      LOCK_USER_COMMANDS.filter((command) => command !== 'info'),
    );
    const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
    try {
      const client = lockUserClient();
      await new Promise((resolve) => client.once('ready', resolve));

      expect(warn.mock.calls).toEqual([
        [expect.stringMatching(/^Skipping the ready check because INFO command fails: "NOPERM/)],
      ]);
    } finally {
      warn.mockRestore();
    }
  });

  // What was refused, as a regular expression's source: the reply's code, not its words, which differ
  // between Redis 7.0, 7.2 and Valkey (a command a script runs is named by 7.2 and Valkey only).
  it.each<[string, (prefix: string) => Promise<void>, string]>([
    [
      'without EVALSHA',
      (prefix) =>
        setLockUser(
          redis.admin,
          prefix,
          LOCK_USER_COMMANDS.filter((command) => command !== 'evalsha'),
        ),
      'refused EVALSHA for user "locks": NOPERM ',
    ],
    [
      'without SET, which a script runs',
      (prefix) =>
        setLockUser(
          redis.admin,
          prefix,
          LOCK_USER_COMMANDS.filter((command) => command !== 'set'),
        ),
      // The first script that runs SET: the heartbeat's (its health turn) or the first tick's.
      'refused (SET \\(run by (acquire-job|bid-health-turn)\\.lua\\)|a command (acquire-job\\.lua runs \\(one of MGET, TIME, GET, SET\\)|bid-health-turn\\.lua runs \\(one of GET, SET\\))) for user "locks": ERR ',
    ],
  ])(
    "with startupCheck 'warn', an app whose user is %s logs one line naming the endpoint and what was refused, and runs once allowed",
    async (_, restrict, refusal) => {
      await restrict(keyPrefix);
      const startApp = () =>
        startSchedulerApp({
          lock: { redis: lockUserUrl(), keyPrefix, defaultLockAtMostFor: '5s', startupCheck: 'warn' },
          providers: [IntervalJob],
        });

      const endpoint = escapeRegExp(`Redis 127.0.0.1:${redis.server.port} `);
      const app = await expectTicksSkippedWithOneLine(
        startApp,
        new RegExp(
          `^${endpoint}${refusal}.*; calls that need it fail, and locked ticks are skipped, until the user's ACL allows it$`,
        ),
      );

      await setLockUser(redis.admin, keyPrefix);
      await nextEvent(app.events$, jobEvent('released', 'IntervalJob.tick'));
      expect(app.get(IntervalJob).runs).toBeGreaterThan(0);
      expect(app.logs.texts('error')).toHaveLength(1);
      expect(everythingSaid(app).filter((text) => text.includes(LOCK_USER.password))).toEqual([]);
    },
  );

  it('with the keys of another prefix, the startup fails with one error naming the commands refused on its keys', async () => {
    await setLockUser(redis.admin, 'another-app');

    await expectStartupRefused(
      () =>
        startSchedulerApp({
          lock: { redis: lockUserUrl(), keyPrefix, defaultLockAtMostFor: '5s' },
          providers: [IntervalJob],
        }),
      refusedStartup(
        `127.0.0.1:${redis.server.port}`,
        `the ACL of user "locks" refuses EVALSHA, EVAL, GET, [A-Z, ]+, which the module sends on keys like "${keyPrefix}:\\{startup-check\\}"`,
      ),
    );
  });

  it.each(LOCK_USER_COMMANDS.filter((command) => command !== 'info'))(
    'without %s, the startup fails with one error naming the endpoint, the user and the command',
    async (withheld) => {
      await setLockUser(
        redis.admin,
        keyPrefix,
        LOCK_USER_COMMANDS.filter((command) => command !== withheld),
      );
      const named = withheld.toUpperCase();
      // EVALSHA and EVAL are refused to the check's own call; any other command, to redis.acl_check_cmd.
      const cause =
        withheld === 'evalsha' || withheld === 'eval'
          ? `refused ${named} for user "locks": NOPERM [^)]+`
          : `the ACL of user "locks" refuses ${named}, which the module sends on keys like "${keyPrefix}:\\{startup-check\\}"`;

      const error = await expectStartupRefused(
        () =>
          startSchedulerApp({
            lock: { redis: lockUserUrl(), keyPrefix, defaultLockAtMostFor: '5s' },
            providers: [IntervalJob],
          }),
        refusedStartup(`127.0.0.1:${redis.server.port}`, cause),
      );

      expect(error.message).not.toContain(LOCK_USER.password);
    },
  );

  it('is set up by the ACL SETUSER line of docs/redis.md, which names exactly these commands', async () => {
    const page = await readFile(new URL('../../docs/redis.md', import.meta.url), 'utf8');
    const lines = page.split('\n').filter((line) => line.startsWith('ACL SETUSER '));

    expect(lines).toEqual([`ACL SETUSER ${lockUserRules('locks', 'LOCKS_PASSWORD', 'job-lock').join(' ')}`]);
  });
});
