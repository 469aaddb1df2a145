import { freePort, startPrivateRedisServer } from '../support/redis-server.js';
import { SHARED_REDIS_URL, uniquePrefix } from '../support/shared-redis.js';
import { runCli } from './support/run-cli.js';

const USAGE_FIRST_LINE = 'Usage: nest-scheduler-lock <command> [options]';

describe('nest-scheduler-lock exit codes', () => {
  it('2 on a usage error: the reason on one line, then the usage text, on stderr', async () => {
    const redis = ['--redis', SHARED_REDIS_URL];
    const cases: [args: string[], reason: string][] = [
      [[...redis], 'no command given'],
      [
        ['list', ...redis],
        'unknown command "list"; the commands are jobs, nodes, job, history, election, pause, resume, trigger, ' +
          'unlock, step-down',
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
      const { code, stdout, stderr } = await runCli(args);
      expect({ args, code, stdout }).toEqual({ args, code: 2, stdout: '' });
      const [first, blank, usage] = stderr.split('\n');
      expect(first).toContain(`nest-scheduler-lock: ${reason}`);
      expect([blank, usage]).toEqual(['', USAGE_FIRST_LINE]);
      expect(stderr).toMatch(/Exit codes: 0 done; 1 failed .*; 2 usage error\.\n$/);
    }
  });

  it('0 for --help, with the usage text on stdout', async () => {
    const { code, stdout, stderr } = await runCli(['--help']);
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
    ])
      expect(stdout).toMatch(new RegExp(`^  ${command} `, 'm'));
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
