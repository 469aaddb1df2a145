import { freePort, startPrivateRedisServer } from '../support/redis-server.js';
import { SHARED_REDIS_URL, uniquePrefix } from '../support/shared-redis.js';
import { runCli } from './support/run-cli.js';

const USAGE_FIRST_LINE = 'Usage: nest-scheduler-lock <command> [options]';

describe('nest-scheduler-lock exit codes', () => {
  it('the bin: 2 on a usage error, with the usage text on stderr; 0 for --help, with it on stdout', async () => {
    const usage = await runCli(['list', '--redis', SHARED_REDIS_URL]);
    expect({ code: usage.code, stdout: usage.stdout }).toEqual({ code: 2, stdout: '' });
    expect(usage.stderr.split('\n').slice(0, 3)).toEqual([
      'nest-scheduler-lock: unknown command "list"; the commands are jobs, nodes, health, job, history, election, elections, pause, resume, ' +
        'trigger, unlock, step-down',
      '',
      USAGE_FIRST_LINE,
    ]);
    const help = await runCli(['--help']);
    expect({ code: help.code, stderr: help.stderr }).toEqual({ code: 0, stderr: '' });
    expect(help.stdout.split('\n')[0]).toBe(USAGE_FIRST_LINE);
  });

  it('1 for a job no node runs, on one line, for every command that names a job', async () => {
    const prefix = uniquePrefix('cli-unknown');
    for (const command of ['job', 'history', 'pause', 'resume', 'trigger', 'unlock']) {
      expect(await runCli([command, 'nope', '--prefix', prefix], { REDIS_URL: SHARED_REDIS_URL })).toEqual({
        code: 1,
        stdout: '',
        stderr: `nest-scheduler-lock: No node of the cluster runs a locked job named "nope" (key prefix "${prefix}")\n`,
      });
    }
  });

  it('1 for an unreachable Redis: one line naming it and why, never the password', async () => {
    const [port, otherPort] = [await freePort(), await freePort()];
    expect(await runCli(['jobs', '--redis', `redis://ops:s3cret@127.0.0.1:${port}`])).toEqual({
      code: 1,
      stdout: '',
      stderr: `nest-scheduler-lock: Redis 127.0.0.1:${port} is unreachable (connection refused, ECONNREFUSED)\n`,
    });
    const cluster = `redis://ops:s3cret@127.0.0.1:${port},127.0.0.1:${otherPort}`;
    expect(await runCli(['nodes', '--redis', cluster])).toEqual({
      code: 1,
      stdout: '',
      stderr:
        `nest-scheduler-lock: Redis Cluster 127.0.0.1:${port}, 127.0.0.1:${otherPort} is unreachable ` +
        '(connection refused, ECONNREFUSED)\n',
    });
  });

  it('1 for a wrong password, said as refused (not unreachable), naming the user and never the password', async () => {
    const server = await startPrivateRedisServer({ requirepass: 'right-one' });
    try {
      const url = `redis://default:wrong-one@127.0.0.1:${server.port}`;
      expect(await runCli(['jobs', '--redis', url])).toEqual({
        code: 1,
        stdout: '',
        stderr:
          `nest-scheduler-lock: Redis 127.0.0.1:${server.port} is reachable, but ` +
          'authentication failed for user "default": WRONGPASS\n',
      });
      const authorized = await runCli(['jobs', '--redis', `redis://:right-one@127.0.0.1:${server.port}`]);
      expect(authorized).toMatchObject({ code: 0, stderr: '' });
    } finally {
      await server.stop();
    }
  });

  it('1 for --cluster against a Redis that is no Cluster, with what it answered', async () => {
    const { code, stdout, stderr } = await runCli(['jobs', '--cluster', '--redis', SHARED_REDIS_URL]);
    expect({ code, stdout }).toEqual({ code: 1, stdout: '' });
    expect(stderr).toMatch(
      /^nest-scheduler-lock: Redis Cluster \S+ answered: ERR This instance has cluster support disabled\n$/,
    );
  });
});
