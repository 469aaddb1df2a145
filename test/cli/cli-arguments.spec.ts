import { Redis } from 'ioredis';
import { described } from '../../lib/cli/redis-connection.js';
import { freePort } from '../support/redis-server.js';
import { runCliInProcess } from './support/run-cli.js';

/**
 * The CLI's command line, run in this process with no store reached: usage errors and help, the checks made
 * before any connection, masked URLs, and the wording of a store's refusal. cli-exit-codes.spec.ts runs the bin.
 */
async function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const run = await runCliInProcess(args, env);
  return { ...run, firstLine: run.stderr.split('\n')[0] };
}

const USAGE_FIRST_LINE = 'Usage: nest-scheduler-lock <command> [options]';
const SECRET = 'S3cr3t-never-shown';
/** A Redis URL for commands that exit before they connect: no server is reached. */
const REDIS_URL = 'redis://127.0.0.1:6379';

describe('nest-scheduler-lock exit codes before a connection', () => {
  it('2 on a usage error: the reason on one line, then the usage text, on stderr', async () => {
    const redis = ['--redis', REDIS_URL];
    const cases: [args: string[], reason: string][] = [
      [[...redis], 'no command given'],
      [
        ['list', ...redis],
        'unknown command "list"; the commands are jobs, nodes, health, job, history, election, elections, pause, resume, ' +
          'trigger, unlock, step-down',
      ],
      [['pause', ...redis], 'pause needs a job name: pause NAME'],
      [['jobs', 'report', ...redis], 'jobs takes no job name (got "report")'],
      [['job', 'report', 'noon', ...redis], 'unexpected argument: noon'],
      [['jobs', '--verbose', ...redis], "Unknown option '--verbose'"],
      [['jobs', '--redis'], "Option '--redis <value>' argument missing"],
      [['jobs'], 'no store given: --redis URL or REDIS_URL for Redis, --postgres URL or DATABASE_URL for PostgreSQL'],
      [['jobs', '--redis', 'http://127.0.0.1:6379'], '--redis address 1 must be redis:// or rediss:// (got http://)'],
      [['history', 'report', '--limit', '0', ...redis], '--limit must be a whole number of at least 1 (got "0")'],
      [['nodes', '--heartbeat', 'soon', ...redis], '--heartbeat: Invalid duration "soon"'],
      [['unlock', 'report', '--actor', ' ', ...redis], '--actor must not be empty'],
    ];
    for (const [args, reason] of cases) {
      const { code, stdout, stderr } = await cli(args);
      expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: '' });
      const [first, blank, usage] = stderr.split('\n');
      expect(first).toContain(`nest-scheduler-lock: ${reason}`);
      expect([blank, usage]).toEqual(['', USAGE_FIRST_LINE]);
      expect(stderr).toMatch(/Exit codes: 0 done; 1 failed [\s\S]*; 2 usage error\.\n$/);
    }
  });

  it('0 for --help, with the usage text on stdout', async () => {
    const { code, stdout, stderr } = await cli(['--help']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.split('\n')[0]).toBe(USAGE_FIRST_LINE);
    for (const command of [
      'jobs',
      'job NAME',
      'history NAME',
      'nodes',
      'pause NAME',
      'resume NAME',
      'trigger NAME',
      'unlock NAME',
      'health',
      'election NAME',
      'elections',
      'step-down NAME',
    ])
      expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
  });

  it('--help says to give a URL with a password in REDIS_URL, not --redis, which ps shows', async () => {
    const { stdout } = await cli(['--help']);
    expect(stdout).toContain('A URL with a password belongs in');
    expect(stdout).toMatch(/REDIS_URL, not here: every user of the machine sees a command's arguments \(ps\)/);
  });
});

describe('nest-scheduler-lock checks every argument before it connects', () => {
  /** A Redis URL nothing listens on: a check made after connecting would exit 1 (unreachable) instead of 2. */
  let nowhere: NodeJS.ProcessEnv;
  beforeAll(async () => {
    nowhere = { REDIS_URL: `redis://127.0.0.1:${await freePort()}` };
  });

  it.each<[string, string[], string]>([
    ['a 100 KB --actor', ['--actor', 'a'.repeat(100_000)], '--actor must be at most 100 characters (got 100000)'],
    ['a 101-character --actor', ['--actor', 'a'.repeat(101)], '--actor must be at most 100 characters (got 101)'],
    ['a 501-character --reason', ['--reason', 'x'.repeat(501)], '--reason must be at most 500 characters (got 501)'],
    [
      'a NUL in --reason',
      ['--reason', 'before\u0000after'],
      '--reason must not contain a control character (U+0000 at index 6)',
    ],
    [
      'a lone surrogate in --reason',
      ['--reason', 'half \ud83d an emoji'],
      '--reason must not contain a lone surrogate (U+D83D at index 5)',
    ],
    [
      'an escape in --actor',
      ['--actor', 'ops\u001b[2J'],
      '--actor must not contain a control character (U+001B at index 3)',
    ],
    [
      'a C1 control in --reason',
      ['--reason', '\u009b31m'],
      '--reason must not contain a control character (U+009B at index 0)',
    ],
  ])('%s: exit 2, as the admin words it', async (_, options, says) => {
    for (const command of ['pause', 'resume', 'trigger', 'unlock']) {
      const { code, stdout, firstLine } = await cli([command, 'report', ...options], nowhere);
      expect({ command, code, stdout, firstLine }).toEqual({
        command,
        code: 2,
        stdout: '',
        firstLine: `nest-scheduler-lock: ${says}`,
      });
    }
  });

  it('takes a note at the limits: an actor of 100 characters, a reason of 500 with an emoji (a surrogate pair)', async () => {
    const run = await cli(['pause', 'report', '--actor', 'a'.repeat(100), '--reason', `${'x'.repeat(498)}👍`], nowhere);
    // It gets as far as connecting: the store is what fails.
    expect(run).toMatchObject({ code: 1, stderr: expect.stringContaining('is unreachable') });
  });

  it('--schema and --table-prefix: exit 2 at once, not after a connection attempt', async () => {
    const postgres = `postgres://127.0.0.1:${await freePort()}/locks`;
    const identifier = 'must be letters, digits and underscores, starting with a letter or an underscore';
    for (const [option, value] of [
      ['--schema', 'public; DROP TABLE x'],
      ['--table-prefix', 'x"y'],
      ['--schema', 'a'.repeat(59)],
    ]) {
      const run = await cli(['jobs', '--postgres', postgres, option, value]);
      expect({ option, code: run.code, firstLine: run.firstLine }).toEqual({
        option,
        code: 2,
        firstLine: `nest-scheduler-lock: ${option} ${identifier}, at most 58 characters (got ${JSON.stringify(value)})`,
      });
    }
  });
});

describe('nest-scheduler-lock masks passwords by parsing the URLs it quotes', () => {
  it.each<[string, string[], NodeJS.ProcessEnv, string]>([
    [
      'a password with a quote',
      ['jobs', `redis://:pa"${SECRET}@127.0.0.1:6379`],
      {},
      'jobs takes no job name (got "redis://:***@127.0.0.1:6379")',
    ],
    [
      'a ?password= query parameter',
      [`redis://127.0.0.1:6379?password=${SECRET}&db=2`, 'jobs'],
      {},
      'unknown command "redis://127.0.0.1:6379?password=***&db=2"; the commands are jobs, nodes, health, job, history, ' +
        'election, elections, pause, resume, trigger, unlock, step-down',
    ],
    [
      "PostgreSQL's ?password=, the user kept",
      ['job', 'report', `postgres://ops@db/app?password=${SECRET}`],
      {},
      'unexpected argument: postgres://ops@db/app?password=***',
    ],
    [
      'a URL without a scheme',
      ['nodes', `:${SECRET}@cache:6379`],
      {},
      'nodes takes no job name (got ":***@cache:6379")',
    ],
  ])('%s', async (_, args, env, says) => {
    const run = await cli(args, { REDIS_URL, ...env });
    expect(run.code).toBe(2);
    expect(run.firstLine).toBe(`nest-scheduler-lock: ${says}`);
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });
});

describe('nest-scheduler-lock says a store refused it, not that it is unreachable', () => {
  it('Redis: refused credentials, naming the user, from the error ioredis gives', async () => {
    const port = await freePort();
    const client = new Redis({ port, username: 'locks', password: SECRET, lazyConnect: true });
    const wrongPassword = Object.assign(new Error('WRONGPASS invalid username-password pair or user is disabled.'), {
      name: 'ReplyError',
    });
    expect(described(client, wrongPassword).message).toBe(
      `Redis localhost:${port} is reachable, but authentication failed for user "locks": WRONGPASS`,
    );
  });
});
