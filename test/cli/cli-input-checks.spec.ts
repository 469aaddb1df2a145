import pg from 'pg';
import { Redis } from 'ioredis';
import { runCli } from '../../lib/cli/cli.js';
import { described } from '../../lib/cli/redis-connection.js';
import { freePort } from '../support/redis-server.js';
import { SHARED_POSTGRES } from '../support/shared-postgres.js';
import { deleteKeys, sharedRedis, SHARED_REDIS_URL, uniquePrefix } from '../support/shared-redis.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

/**
 * The CLI run in this process (lib/cli/cli.ts, as the built bin runs it), for what needs no app: the arguments
 * checked before any connection, masked URLs, JSON escapes, and the wording of a store's refusal.
 */
async function cli(args: readonly string[], env: NodeJS.ProcessEnv = {}) {
  const [out, err]: string[][] = [[], []];
  const code = await runCli(args, env, { out: (text) => out.push(text), err: (text) => err.push(text) });
  return { code, stdout: out.join('\n'), stderr: err.join('\n'), firstLine: err.join('\n').split('\n')[0] };
}

const SECRET = 'S3cr3t-never-shown';
const SHARED_POSTGRES_URL = `postgres://${SHARED_POSTGRES.host}:${SHARED_POSTGRES.port}/${SHARED_POSTGRES.database}`;

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
      'unknown command "redis://127.0.0.1:6379?password=***&db=2"; the commands are jobs, nodes, job, history, ' +
        'pause, resume, trigger, unlock',
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
    const run = await cli(args, { REDIS_URL: SHARED_REDIS_URL, ...env });
    expect(run.code).toBe(2);
    expect(run.firstLine).toBe(`nest-scheduler-lock: ${says}`);
    expect(run.stdout + run.stderr).not.toContain(SECRET);
  });
});

describe('nest-scheduler-lock --json', () => {
  const prefix = uniquePrefix('cli-json-escapes');
  const redis = sharedRedis();
  afterAll(async () => {
    await deleteKeys(redis, prefix);
    redis.disconnect();
  });

  it('escapes C1 controls and bidi marks as \\uXXXX, as the tables do; JSON.parse gives the text back', async () => {
    const hidden = ['\u0085', '\u009b', '\u061c', '\u200e', '\u200f', '\u202a', '\u202e', '\u2066', '\u2069'];
    const node = `node-${hidden.join('-')}31m`;
    const at = Date.now();
    await new RedisLockProvider(redis, { keyPrefix: prefix })
      .operatorProvider()
      .publish({ node, version: '0.0.0', startedAt: at, lastSeen: at, jobs: [] }, []);

    const { code, stdout } = await cli(['nodes', '--json', '--prefix', prefix], { REDIS_URL: SHARED_REDIS_URL });
    expect(code).toBe(0);
    expect(hidden.filter((character) => stdout.includes(character))).toEqual([]);
    expect(stdout).toContain('node-\\u0085-\\u009b-\\u061c-\\u200e-\\u200f-\\u202a-\\u202e-\\u2066-\\u206931m');
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ node })]);
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

  describe('PostgreSQL', () => {
    let defaultUser: string | undefined;
    beforeAll(() => {
      defaultUser = pg.defaults.user;
    });
    afterAll(() => {
      pg.defaults.user = defaultUser;
    });

    it.each<[string, string, string]>([
      [
        'a user the server does not know, from the URL',
        `postgres://nsl_nobody_here@${SHARED_POSTGRES.host}:${SHARED_POSTGRES.port}/${SHARED_POSTGRES.database}`,
        'refused the credentials for user "nsl_nobody_here": role "nsl_nobody_here" does not exist (28000)',
      ],
      [
        'a database that does not exist',
        `postgres://${SHARED_POSTGRES.user}@${SHARED_POSTGRES.host}:${SHARED_POSTGRES.port}/nsl_no_such_database`,
        `has no such database for user "${SHARED_POSTGRES.user}": database "nsl_no_such_database" does not exist (3D000)`,
      ],
    ])('%s', async (_, url, says) => {
      const { code, stderr } = await cli(['jobs'], { DATABASE_URL: url });
      const endpoint = new URL(url);
      expect({ code, stderr }).toEqual({
        code: 1,
        stderr: `nest-scheduler-lock: PostgreSQL ${endpoint.host}${endpoint.pathname} ${says}`,
      });
    });

    it('no user at all: says so, and that DATABASE_URL may be unset', async () => {
      // What node-postgres falls back to after the URL and PGUSER: the OS user, which a container may lack.
      pg.defaults.user = undefined;
      const pgUser = process.env.PGUSER;
      delete process.env.PGUSER;
      try {
        const { code, stderr } = await cli(['jobs'], { DATABASE_URL: SHARED_POSTGRES_URL });
        expect(code).toBe(1);
        expect(stderr).toMatch(/^nest-scheduler-lock: PostgreSQL \S+ refused the credentials with no user given /);
        expect(stderr).toContain('(is DATABASE_URL unset? ');
        expect(stderr).toContain('no PostgreSQL user name specified in startup packet (28000)');
      } finally {
        if (pgUser !== undefined) process.env.PGUSER = pgUser;
      }
    });
  });
});
