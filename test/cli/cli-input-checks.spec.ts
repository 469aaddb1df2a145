import pg from 'pg';
import { SHARED_POSTGRES } from '../support/shared-postgres.js';
import { deleteKeys, sharedRedis, SHARED_REDIS_URL, uniquePrefix } from '../support/shared-redis.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { runCliInProcess as cli } from './support/run-cli.js';

/**
 * The CLI run in this process against the shared Redis and PostgreSQL, for what needs no app: JSON escapes of
 * what the store holds, and the wording of a store's refusal. cli-arguments.spec.ts checks the command line.
 */
const SHARED_POSTGRES_URL = `postgres://${SHARED_POSTGRES.host}:${SHARED_POSTGRES.port}/${SHARED_POSTGRES.database}`;

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
    const at = new Date();
    await new RedisLockProvider(redis, { keyPrefix: prefix })
      .operatorProvider()
      .publish({ node, version: '0.0.0', startedAt: at, lastSeen: at, jobs: [], elections: [] }, [], new Map(), {
        lease: 1,
        unhealthy: {},
      });

    const { code, stdout } = await cli(['nodes', '--json', '--prefix', prefix], { REDIS_URL: SHARED_REDIS_URL });
    expect(code).toBe(0);
    expect(hidden.filter((character) => stdout.includes(character))).toEqual([]);
    expect(stdout).toContain('node-\\u0085-\\u009b-\\u061c-\\u200e-\\u200f-\\u202a-\\u202e-\\u2066-\\u206931m');
    expect(JSON.parse(stdout)).toEqual([expect.objectContaining({ node })]);
  });
});

describe('nest-scheduler-lock says a store refused it, not that it is unreachable', () => {
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
        stderr: `nest-scheduler-lock: PostgreSQL ${endpoint.host}${endpoint.pathname} ${says}\n`,
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
