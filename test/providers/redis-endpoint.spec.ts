import { Cluster, Redis } from 'ioredis';
import { LockProviderUnavailableError } from '../../lib/index.js';
import { describeRedisEndpoint } from '../../lib/providers/redis/redis-endpoint.js';
import { RedisCommandRefusedError, redisFailure } from '../../lib/providers/redis/redis-failures.js';

/** Clients that never connect: only their options are read. */
const LAZY = { lazyConnect: true } as const;
const clients: (Redis | Cluster)[] = [];
function unconnected<C extends Redis | Cluster>(client: C): C {
  clients.push(client);
  return client;
}
afterAll(() => clients.forEach((client) => client.disconnect()));

describe('how messages name a Redis endpoint', () => {
  it.each<[string, () => Redis | Cluster, string]>([
    ['a URL with credentials', () => new Redis('redis://app:pw-secret@10.0.0.5:6390/2', LAZY), '10.0.0.5:6390'],
    ['options with defaults', () => new Redis({ password: 'pw-secret', lazyConnect: true }), 'localhost:6379'],
    ['a unix socket', () => new Redis({ path: '/var/run/redis.sock', lazyConnect: true }), '/var/run/redis.sock'],
    [
      'Sentinel',
      () =>
        new Redis({
          sentinels: [
            { host: 's1', port: 26379 },
            { host: 's2', port: 26380 },
          ],
          name: 'orders',
          password: 'pw-secret',
          sentinelPassword: 'pw-secret',
          lazyConnect: true,
        }),
      'master "orders" via Sentinel s1:26379, s2:26380',
    ],
    [
      'a Cluster (startup nodes in every form ioredis takes)',
      () => new Cluster(['redis://:pw-secret@c1:7000', { host: 'c2', port: 7001 }, 7002, 'c4:7003'], LAZY),
      'Cluster c1:7000, c2:7001, localhost:7002 and 1 more',
    ],
  ])('%s: hosts and ports, never a password', (_, client, endpoint) => {
    expect(describeRedisEndpoint(unconnected(client()))).toBe(endpoint);
  });
});

describe('what a failed command says about Redis', () => {
  const client = () => unconnected(new Redis({ host: '10.0.0.5', port: 6390, lazyConnect: true }));
  const replyError = (message: string) => Object.assign(new Error(message), { name: 'ReplyError' });
  const systemError = (message: string, code: string) => Object.assign(new Error(message), { code });

  it.each<[string, Error, string]>([
    ['a refused connection', systemError('connect ECONNREFUSED', 'ECONNREFUSED'), 'connection refused, ECONNREFUSED'],
    ['a connect timeout', systemError('connect ETIMEDOUT', 'ETIMEDOUT'), 'connect timeout, ETIMEDOUT'],
    ['an unknown host', systemError('getaddrinfo ENOTFOUND redis', 'ENOTFOUND'), 'host not found, ENOTFOUND'],
    [
      'a certificate no trusted CA signed',
      systemError('self-signed certificate in certificate chain', 'SELF_SIGNED_CERT_IN_CHAIN'),
      'TLS certificate not trusted: self-signed certificate in certificate chain, SELF_SIGNED_CERT_IN_CHAIN',
    ],
    ['a wrong password', replyError('WRONGPASS invalid username-password pair'), 'authentication failed: WRONGPASS'],
    ['a missing password', replyError('NOAUTH Authentication required.'), 'authentication failed: NOAUTH'],
    ['a closed connection', new Error('Connection is closed.'), 'connection closed, the client is wait'],
    [
      "ioredis's offline queue",
      new Error("Stream isn't writeable and enableOfflineQueue options is false"),
      'not connected, the client is wait',
    ],
  ])('%s is a LockProviderUnavailableError naming the endpoint and the cause', (_, error, reason) => {
    const failure = redisFailure(client(), error);

    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    expect(failure).toMatchObject({ message: `Redis 10.0.0.5:6390 is unreachable (${reason})`, reason, cause: error });
  });

  it('names the user whose authentication failed, when the client sets one', () => {
    const aclClient = unconnected(
      new Redis({ host: '10.0.0.5', port: 6390, username: 'locks', password: 'pw-secret', lazyConnect: true }),
    );

    const failure = redisFailure(
      aclClient,
      replyError('WRONGPASS invalid username-password pair or user is disabled.'),
    );

    expect(failure).toMatchObject({
      message: 'Redis 10.0.0.5:6390 is unreachable (authentication failed for user "locks": WRONGPASS)',
    });
  });

  it('leaves a reply error as it is: Redis answered', () => {
    const error = replyError('WRONGTYPE Operation against a key holding the wrong kind of value');

    expect(redisFailure(client(), error)).toBe(error);
  });
});

describe("a command Redis refuses to the client's user (ACL)", () => {
  const sent = (name: string, message: string) =>
    Object.assign(new Error(message), { name: 'ReplyError', command: { name, args: [] } });
  const aclClient = () => unconnected(new Redis('redis://locks:pw-secret@10.0.0.5:6390', LAZY));

  it.each<[string, () => Redis | Cluster, Error, string]>([
    [
      'a command the user may not run',
      aclClient,
      sent('evalsha', "NOPERM this user has no permissions to run the 'evalsha' command"),
      `refused EVALSHA for user "locks": NOPERM this user has no permissions to run the 'evalsha' command`,
    ],
    [
      'a key outside its patterns',
      aclClient,
      sent('evalsha', 'NOPERM this user has no permissions to access one of the keys used as arguments'),
      'refused EVALSHA for user "locks": NOPERM this user has no permissions to access one of the keys used as arguments',
    ],
    [
      'a command queued in a transaction (the transaction fails with EXECABORT)',
      aclClient,
      Object.assign(sent('exec', 'EXECABORT Transaction discarded because of previous errors.'), {
        previousErrors: [sent('hgetall', "NOPERM this user has no permissions to run the 'hgetall' command")],
      }),
      `refused HGETALL for user "locks": NOPERM this user has no permissions to run the 'hgetall' command`,
    ],
    [
      'the default user, on a Cluster',
      () => unconnected(new Cluster([{ host: '10.0.0.5', port: 6390 }], LAZY)),
      sent('evalsha', "NOPERM this user has no permissions to run the 'evalsha' command"),
      `refused EVALSHA for user "default": NOPERM this user has no permissions to run the 'evalsha' command`,
    ],
  ])('%s is a RedisCommandRefusedError naming the endpoint, the command and the user', (_, client, error, reason) => {
    const failure = redisFailure(client(), error);

    expect(failure).toBeInstanceOf(RedisCommandRefusedError);
    expect(failure).toBeInstanceOf(LockProviderUnavailableError);
    expect(failure).toMatchObject({
      message: expect.stringMatching(/^Redis (Cluster )?10\.0\.0\.5:6390 /),
      reason,
      cause: error,
    });
    expect((failure as Error).message.endsWith(reason)).toBe(true);
  });

  it('names the script and the commands it runs for a command a script may not run: Redis does not say which', () => {
    const error = sent(
      'evalsha',
      "ERR The user executing the script can't run this command or subcommand script: 1f2e, on @user_script:5.",
    );

    const failure = redisFailure(aclClient(), error, { file: 'acquire.lua', commands: ['SET', 'INCR'] });

    expect(failure).toMatchObject({
      message:
        'Redis 10.0.0.5:6390 refused a command acquire.lua runs (one of SET, INCR) for user "locks": ' +
        "ERR The user executing the script can't run this command or subcommand script: 1f2e, on @user_script:5.",
    });
  });
});
