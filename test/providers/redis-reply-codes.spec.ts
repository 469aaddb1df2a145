import { Redis } from 'ioredis';
import { LockProviderUnavailableError } from '../../lib/index.js';
import {
  misconfiguration,
  RedisCommandRefusedError,
  redisFailure,
  replyCode,
} from '../../lib/providers/redis/redis-failures.js';
import { SHARED_REDIS_URL, uniquePrefix } from '../support/shared-redis.js';

/**
 * Issue 23: a reply error is recognised by the code it starts with, never by the words after it, which
 * Redis and Valkey (and their versions) word differently. Each error below is fed in both wordings.
 */
const client = new Redis('redis://locks:pw-secret@10.0.0.5:6390', { lazyConnect: true });
afterAll(() => client.disconnect());

const reply = (message: string, command = 'evalsha') =>
  Object.assign(new Error(message), { name: 'ReplyError', command: { name: command, args: [] } });
const SCRIPT = { file: 'acquire-job.lua', commands: ['MGET', 'SET', 'INCR'] };

/** [server, reply] pairs of one error. */
type Wordings = readonly (readonly [server: string, message: string])[];

const NOSCRIPT: Wordings = [
  ['Redis 7', 'NOSCRIPT No matching script. Please use EVAL.'],
  ['Valkey 8', 'NOSCRIPT No matching script.'],
];

describe('the code a reply starts with', () => {
  it.each(NOSCRIPT)('NOSCRIPT in the wording of %s', (_, message) => {
    expect(replyCode(reply(message))).toBe('NOSCRIPT');
  });

  it('is no code when the message does not start with one', () => {
    expect(replyCode(new Error('Connection is closed.'))).toBeUndefined();
    expect(replyCode(reply('the NOPERM word later on'))).toBeUndefined();
  });
});

describe('a refused command (NOPERM), in either wording', () => {
  it.each<[string, string, string]>([
    ['Redis 7.0', "NOPERM this user has no permissions to run the 'evalsha' command or its subcommand", 'EVALSHA'],
    ['Valkey 8 / Redis 7.2', "NOPERM User locks has no permissions to run the 'evalsha' command", 'EVALSHA'],
    ['Redis 7.0, a key', 'NOPERM this user has no permissions to access one of the keys used as arguments', 'EVALSHA'],
    ['Valkey 8 / Redis 7.2, a key', 'NOPERM No permissions to access a key', 'EVALSHA'],
  ])('%s: a RedisCommandRefusedError naming the command', (_, message, refused) => {
    const failure = redisFailure(client, reply(message));

    expect(failure).toBeInstanceOf(RedisCommandRefusedError);
    expect(failure).toMatchObject({
      refused,
      user: 'locks',
      reason: `refused ${refused} for user "locks": ${message}`,
    });
    expect(misconfiguration(failure, client)).toBe((failure as RedisCommandRefusedError).reason);
  });

  it.each<[string, string, string]>([
    [
      'Redis 7.0 (which does not name the command)',
      "ERR The user executing the script can't run this command or subcommand script: 5e4f, on @user_script:41.",
      'a command acquire-job.lua runs (one of MGET, SET, INCR)',
    ],
    [
      'Valkey 8 / Redis 7.2',
      "ERR ACL failure in script: User locks has no permissions to run the 'set' command script: 5e4f, on @user_script:7.",
      'SET (run by acquire-job.lua)',
    ],
  ])('inside a script, in the wording of %s', (_, message, refused) => {
    const failure = redisFailure(client, reply(message), SCRIPT);

    expect(failure).toBeInstanceOf(RedisCommandRefusedError);
    expect(failure).toMatchObject({
      refused,
      message: `Redis 10.0.0.5:6390 refused ${refused} for user "locks": ${message}`,
    });
  });

  it('refused to EXEC itself: the transaction is aborted with the refusal after "because of:"', () => {
    const message =
      "EXECABORT Transaction discarded because of: NOPERM this user has no permissions to run the 'exec' command";

    expect(redisFailure(client, reply(message, 'exec'))).toMatchObject({ refused: 'EXEC' });
  });
});

describe('credentials Redis refuses, in either wording', () => {
  it.each<[string, string, string]>([
    ['Redis 7', 'WRONGPASS invalid username-password pair or user is disabled.', 'WRONGPASS'],
    ['Valkey 8', 'WRONGPASS invalid username-password pair or user is disabled.', 'WRONGPASS'],
    ['Redis 7', 'NOAUTH Authentication required.', 'NOAUTH'],
    ['Valkey 8', 'NOAUTH Authentication required.', 'NOAUTH'],
  ])('%s: %s is a failed authentication and a misconfiguration', (_, message, code) => {
    const failure = redisFailure(client, reply(message, 'auth'));

    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    expect(failure).toMatchObject({ reason: `authentication failed for user "locks": ${code}` });
    expect(misconfiguration(failure, client)).toBe(`authentication failed for user "locks": ${code}`);
  });
});

describe('a Redis that answers but cannot serve now, in either wording: an outage, no misconfiguration', () => {
  it.each<[string, string, string]>([
    ['Redis 7', "READONLY You can't write against a read only replica.", 'READONLY'],
    ['Valkey 8', "READONLY You can't write against a read only replica.", 'READONLY'],
    ['Redis 7', 'LOADING Redis is loading the dataset in memory', 'LOADING'],
    ['Valkey 8', 'LOADING Valkey is loading the dataset in memory', 'LOADING'],
    ['Redis 7', 'BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'BUSY'],
    ['Valkey 8', 'BUSY Valkey is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.', 'BUSY'],
    ['Redis 7 and Valkey 8', 'MOVED 3999 127.0.0.1:6381', 'MOVED'],
    ['Redis 7 and Valkey 8', 'ASK 3999 127.0.0.1:6381', 'ASK'],
  ])('%s: %s', (_, message, code) => {
    const failure = redisFailure(client, reply(message));

    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    expect(failure).not.toBeInstanceOf(RedisCommandRefusedError);
    expect((failure as LockProviderUnavailableError).reason).toMatch(new RegExp(`, ${code}$`));
    expect(misconfiguration(failure, client)).toBeUndefined();
  });
});

describe('a command the client gave up on (ioredis commandTimeout)', () => {
  it('is a store that did not answer: unanswered, so one alone is no outage', async () => {
    const slowClient = new Redis(SHARED_REDIS_URL, { lazyConnect: true });
    try {
      // The timeout is set once connected: on a busy machine, the connection's own commands could miss it.
      await slowClient.connect();
      slowClient.options.commandTimeout = 20;
      // A blocking pop on a key nobody pushes to is an answer Redis gives only after the client's timeout.
      const error = await slowClient.blpop(`${uniquePrefix('command-timeout')}:never`, 1).then(
        () => undefined,
        (failed: unknown) => failed,
      );

      const failure = redisFailure(slowClient, error);

      expect(failure).toBeInstanceOf(LockProviderUnavailableError);
      expect(failure).toMatchObject({ reason: "no answer within the client's commandTimeout", unanswered: true });
    } finally {
      slowClient.disconnect();
    }
  });

  it('is told apart from a Redis that answered it cannot serve now', () => {
    expect(redisFailure(client, reply('LOADING Redis is loading the dataset in memory'))).toMatchObject({
      unanswered: false,
    });
  });
});
