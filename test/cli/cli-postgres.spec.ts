import { fileURLToPath } from 'node:url';
import { filter, firstValueFrom, merge, take, timeout, toArray } from 'rxjs';
import type pg from 'pg';
import type { HistoryEntry, JobOverview } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { startPrivatePostgres } from '../support/private-postgres.js';
import { freePort } from '../support/redis-server.js';
import { closeSchedulerApps, type SchedulerApp } from '../support/scheduler-app.js';
import { createSchema, dropSchema, postgresPool, SHARED_POSTGRES, uniqueSchema } from '../support/shared-postgres.js';
import { SHARED_REDIS_URL } from '../support/shared-redis.js';
import { waitUntil } from '../support/wait-until.js';
import { HEARTBEAT, JOB_NAMES, RunGate, startOperatedApp, waitForNodes } from './support/operated-app.js';
import { fields, Operator, runCli, runCliInProcess, tableRows } from './support/run-cli.js';
import { ISO_TIME } from '../support/wire-times.js';

/** The shared PostgreSQL as a URL, the way an operator exports DATABASE_URL. */
const { host, port, database, user } = SHARED_POSTGRES;
const DATABASE_URL = `postgres://${user}@${host}:${port}/${database}`;
/** A password the CLI must never print (the shared server trusts every connection, so it is not checked). */
const PASSWORD = 'pg-s3cret-Pa55';
const WITH_PASSWORD = `postgres://${user}:${PASSWORD}@${host}:${port}/${database}`;

/** Resolves `pg` to nothing in the CLI's process: an install of nest-scheduler-lock without the optional peer. */
const WITHOUT_PG = {
  NODE_OPTIONS: `--import ${fileURLToPath(new URL('../../.build/test/integrations/fixtures/without-packages.js', import.meta.url))}`,
  NSL_HIDDEN_PACKAGES: 'pg',
};

let admin: pg.Pool;
let schema: string;
let gate: RunGate;
/** The CLI on DATABASE_URL, in the test's schema, run in this process. */
let operator: Operator;
/** The same, run as the built bin in a child process: the end-to-end path on PostgreSQL. */
let bin: Operator;
const pools: pg.Pool[] = [];

beforeEach(async () => {
  admin = postgresPool();
  schema = uniqueSchema('cli');
  await createSchema(admin, schema);
  gate = new RunGate();
  operator = new Operator(['--schema', schema, '--heartbeat', HEARTBEAT], { DATABASE_URL }, runCliInProcess);
  bin = new Operator(['--schema', schema, '--heartbeat', HEARTBEAT], { DATABASE_URL });
});

afterEach(async () => {
  gate.openAll();
  await closeSchedulerApps();
  await Promise.all(pools.splice(0).map((pool) => pool.end()));
  await dropSchema(admin, schema);
  await admin.end();
});

/** Starts apps named `names` on PostgresLockProviders (a pool each) in the test's schema; waits until each is live. */
async function startNodes(...names: string[]): Promise<SchedulerApp[]> {
  const apps = await Promise.all(
    names.map((name) => {
      const pool = postgresPool();
      pools.push(pool);
      return startOperatedApp(name, gate, { provider: new PostgresLockProvider(pool, { schema, node: name }) });
    }),
  );
  await waitForNodes(new PostgresLockProvider(admin, { schema }).operatorProvider(), names);
  return apps;
}

describe('nest-scheduler-lock on PostgreSQL (--postgres / DATABASE_URL)', () => {
  it('jobs, job, nodes and history read what the apps on PostgresLockProvider wrote (the jobs table through the built bin)', async () => {
    const apps = await startNodes('node-a', 'node-b');
    await firstValueFrom(merge(...apps.map((app) => app.events$)).pipe(filter(jobEvent('released', 'report'))));

    const jobs = tableRows(await bin.text('jobs'));
    expect(jobs.map((row) => [row.JOB, row.SCHEDULE.split(' ')[0], row.PAUSED])).toEqual([
      ['noon', '0', 'no'],
      ['report', '*', 'no'],
      ['sweep', 'every', 'no'],
    ]);
    expect((await operator.json<JobOverview[]>('jobs')).map((job) => job.jobName)).toEqual(JOB_NAMES);
    expect(fields(await operator.text('job', 'noon'))).toMatchObject({
      job: 'noon',
      lock: 'reports.noon',
      kind: 'cron',
      nodes: 'node-a, node-b',
    });
    expect((await operator.json<{ node: string }[]>('nodes')).map((node) => node.node)).toEqual(['node-a', 'node-b']);
    const [run] = await operator.json<HistoryEntry[]>('history', 'report', '--limit', '1');
    expect(run).toMatchObject({ type: 'run', outcome: 'succeeded' });
    expect(tableRows(await operator.text('history', 'report', '--limit', '1'))).toEqual([
      expect.objectContaining({ WHAT: 'run succeeded' }),
    ]);
  });

  it('pause and resume: every node skips the ticks as paused until resume; the reason is printed escaped', async () => {
    const apps = await startNodes('node-a', 'node-b');
    // A bidi override: allowed in a reason (control characters are not), printed escaped.
    const reason = 'migration \u202eowned';
    expect(await operator.run('pause', 'report', '--actor', 'ops:alice', '--reason', reason)).toEqual({
      code: 0,
      stdout: 'Paused report: every node skips its ticks until resume; a run in progress goes on.\n',
      stderr: '',
    });
    const ticks = merge(...apps.map((app) => app.events$)).pipe(
      filter((event) => event.jobName === 'report' && (event.type === 'skipped' || event.type === 'started')),
    );
    const skipped = await firstValueFrom(ticks.pipe(take(4), toArray(), timeout(5_000)));
    expect(skipped.map((event) => [event.type, 'reason' in event && event.reason])).toEqual(
      Array(4).fill(['skipped', 'paused']),
    );
    expect(fields(await operator.text('job', 'report')).paused).toMatch(
      /^yes, by ops:alice .* ago: migration \\u202eowned$/,
    );

    const started = firstValueFrom(
      ticks.pipe(
        filter((event) => event.type === 'started'),
        timeout(5_000),
      ),
    );
    expect(await operator.text('resume', 'report', '--actor', 'ops:bob')).toBe('Resumed report.\n');
    await started;
    const operatorEntries = (await operator.json<HistoryEntry[]>('history', 'report', '--limit', '50')).filter(
      (entry) => entry.type !== 'run',
    );
    expect(operatorEntries).toEqual([
      { type: 'resume', actor: 'ops:bob', reason: null, formerNode: null, at: expect.stringMatching(ISO_TIME) },
      { type: 'pause', actor: 'ops:alice', reason, formerNode: null, at: expect.stringMatching(ISO_TIME) },
    ]);
  });

  it('trigger runs the job once on a node; a second is refused while it runs; unlock takes the lock from it', async () => {
    const apps = await startNodes('node-a');
    gate.hold('noon');
    const started = nextEvent(apps[0].events$, jobEvent('started', 'noon'));
    const { stdout } = await operator.run('trigger', 'noon', '--actor', 'ops:alice');
    expect(stdout).toMatch(/^Triggered noon: running on node-a \(trigger [0-9a-f-]{36}\)\.\n$/);
    await started;

    expect(await operator.run('trigger', 'noon')).toEqual({
      code: 1,
      stdout: '',
      stderr: 'nest-scheduler-lock: refused: noon is running on node-a; trigger it again once that run has ended\n',
    });
    expect(await operator.text('unlock', 'noon', '--actor', 'ops:carol', '--reason', 'stuck')).toBe(
      'Unlocked noon: the run on node-a sees its lock lost (not-owner) at its next renewal or release.\n',
    );
    const [run] = gate.runs.filter((entry) => entry.job === 'noon');
    // keepAlive renews the lease every 200 ms: the next renewal finds the lock gone and aborts the run.
    await waitUntil(() => run.signal.aborted, 'the unlocked run sees its lock lost');
    const [unlock] = await operator
      .json<HistoryEntry[]>('history', 'noon', '--limit', '50')
      .then((entries) => entries.filter((entry) => entry.type === 'unlock'));
    expect(unlock).toMatchObject({ actor: 'ops:carol', reason: 'stuck', formerNode: 'node-a' });
    expect(await operator.text('unlock', 'noon')).toBe('noon was not locked.\n');
    expect(gate.runs.filter((entry) => entry.job === 'noon')).toHaveLength(1);
  });

  it('1 for a job no node runs, naming the schema and table prefix', async () => {
    await startNodes('node-a');
    expect(await operator.run('job', 'nope')).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'nest-scheduler-lock: No node of the cluster runs a locked job named "nope" ' +
        `(schema "${schema}", table prefix "scheduler_lock_")\n`,
    });
  });

  it('never prints the password: not for --postgres, an unreachable database, a missing table or a usage error', async () => {
    await startNodes('node-a');
    const runs = [
      await runCliInProcess(['nodes', '--postgres', WITH_PASSWORD, '--schema', schema]),
      await runCliInProcess(['jobs', '--schema', `${schema}_missing`], { DATABASE_URL: WITH_PASSWORD }),
      await runCliInProcess(['jobs', '--postgres', `postgres://ops:${PASSWORD}@127.0.0.1:${await freePort()}/locks`]),
      await runCliInProcess(['jobs', '--postgres', `http://ops:${PASSWORD}@127.0.0.1/locks`]),
      await runCliInProcess([`postgres://ops:${PASSWORD}@127.0.0.1/locks`, 'jobs']),
    ];
    for (const { stdout, stderr } of runs) expect(stdout + stderr).not.toContain(PASSWORD);
    expect(runs[0]).toMatchObject({ code: 0, stderr: '' });
    expect(runs[0].stdout).toMatch(/^NODE/);
    expect(runs[1]).toMatchObject({
      code: 1,
      stderr:
        `nest-scheduler-lock: PostgreSQL ${host}:${port}/${database} answered: relation ` +
        `"${schema}_missing.scheduler_lock_jobs" does not exist (no app has created its tables under ` +
        `schema "${schema}_missing", table prefix "scheduler_lock_")\n`,
    });
    expect(runs[2]).toEqual({
      code: 1,
      stdout: '',
      stderr: expect.stringMatching(
        /^nest-scheduler-lock: PostgreSQL 127\.0\.0\.1:\d+\/locks is unreachable \(connection refused, ECONNREFUSED\)\n$/,
      ),
    });
    expect(runs[3].stderr.split('\n')[0]).toBe(
      'nest-scheduler-lock: --postgres must be a postgres:// or postgresql:// URL (got http://)',
    );
    expect(runs[4].stderr.split('\n')[0]).toMatch(/^nest-scheduler-lock: unknown command "postgres:\/\/ops:\*\*\*@/);
  });

  it('1 for a wrong password on a server that checks it, said as refused, never printing either password', async () => {
    const server = await startPrivatePostgres({ password: PASSWORD });
    try {
      const url = (password: string) => `postgres://postgres:${password}@127.0.0.1:${server.port}/postgres`;
      expect(await runCliInProcess(['jobs'], { DATABASE_URL: url('wrong-Pa55word') })).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `nest-scheduler-lock: PostgreSQL 127.0.0.1:${server.port}/postgres refused the credentials for user ` +
          '"postgres": password authentication failed for user "postgres" (28P01)\n',
      });
      // The right password gets in: the tables are missing, and the message says so without the password.
      const authorized = await runCliInProcess(['jobs'], { DATABASE_URL: url(PASSWORD) });
      expect(authorized).toMatchObject({ code: 1, stderr: expect.stringContaining('answered: relation') });
      expect(authorized.stderr).not.toContain(PASSWORD);
    } finally {
      await server.remove();
    }
  });

  it('--help advises DATABASE_URL over --postgres; usage errors for options of the other store', async () => {
    expect((await runCliInProcess(['--help'])).stdout).toContain(
      'A URL with a password belongs in DATABASE_URL, not here (ps)',
    );
    const cases: [string[], NodeJS.ProcessEnv, string][] = [
      [['jobs', '--prefix', 'x'], { DATABASE_URL }, '--prefix is not an option of PostgreSQL'],
      [['jobs', '--schema', 'x', '--redis', SHARED_REDIS_URL], {}, '--schema is not an option of Redis'],
      [['jobs', '--redis', SHARED_REDIS_URL, '--postgres', DATABASE_URL], {}, '--redis and --postgres both given'],
      [['jobs'], { DATABASE_URL, REDIS_URL: SHARED_REDIS_URL }, 'REDIS_URL and DATABASE_URL are both set'],
    ];
    for (const [args, env, reason] of cases)
      expect(await runCliInProcess(args, env)).toMatchObject({
        code: 2,
        stderr: expect.stringContaining(`nest-scheduler-lock: ${reason}`),
      });
  });

  it('loads pg only for PostgreSQL: without it, Redis works and --postgres says to install it', async () => {
    expect(
      await runCli(['jobs', '--prefix', uniqueSchema('no-pg')], { ...WITHOUT_PG, REDIS_URL: SHARED_REDIS_URL }),
    ).toMatchObject({
      code: 0,
      stderr: '',
    });
    expect(await runCli(['jobs'], { ...WITHOUT_PG, DATABASE_URL })).toEqual({
      code: 1,
      stdout: '',
      stderr:
        'nest-scheduler-lock: PostgreSQL needs the pg package, an optional peer of nest-scheduler-lock: ' +
        'install it beside it (npm install pg)\n',
    });
  });
});
