import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { LockProviderUnavailableError } from '../core/provider/errors.js';
import { describeRedisEndpoint } from '../providers/redis/redis-endpoint.js';
import { misconfiguration, redisFailure } from '../providers/redis/redis-failures.js';
import type { RedisClient } from '../providers/redis/redis-client.js';
import { RedisLockProvider } from '../providers/redis/redis-lock-provider.js';
import type { StoreConnection } from './store-connection.js';
import type { RedisTarget } from './store-target.js';

/**
 * How long a connection attempt and each command may take: an operator waits for the answer, so a Redis that
 * does not answer fails the command rather than hanging it.
 */
const CONNECT_TIMEOUT_MS = 5_000;
const COMMAND_TIMEOUT_MS = 10_000;

/** Options for a one-shot client: no reconnection, so an unreachable Redis fails the command at once. */
const ONE_SHOT: RedisOptions = {
  lazyConnect: true,
  retryStrategy: () => null,
  maxRetriesPerRequest: 1,
  connectTimeout: CONNECT_TIMEOUT_MS,
  commandTimeout: COMMAND_TIMEOUT_MS,
  // On disconnect, ioredis waits this long for the socket to close, also for one that failed and closed long
  // ago (a Cluster disconnects its failed nodes that way): its 2 s default would be the CLI's exit delay.
  disconnectTimeout: 100,
};

/**
 * A connected client for `target`. Rejects with a {@link LockProviderUnavailableError} whose message names the
 * endpoint and why it failed (never a password), or with the error Redis replied.
 */
export async function connectRedis(target: RedisTarget): Promise<RedisClient> {
  if (!target.cluster) return connected(new Redis(target.addresses[0], ONE_SHOT));
  const { startupNodes, redisOptions } = clusterSettings(target.addresses);
  const cluster = new Cluster(startupNodes, { lazyConnect: true, clusterRetryStrategy: () => null, redisOptions });
  // A Cluster keeps its startup nodes' socket errors to itself: the first node alone tells why none answered.
  return connected(cluster, async () => {
    const probe = new Redis({ ...redisOptions, ...startupNodes[0] });
    try {
      return await tryConnect(probe);
    } finally {
      probe.disconnect();
    }
  });
}

/** `client` once connected; else rejects with why not, asking `explain` when ioredis did not say. */
async function connected<C extends RedisClient>(client: C, explain?: () => Promise<unknown>): Promise<C> {
  let failure = await tryConnect(client);
  if (failure === undefined) return client;
  if (!telling(failure) && explain) failure = (await explain()) ?? failure;
  const error = described(client, failure);
  client.disconnect();
  throw error;
}

/** Connects `client`; resolves to why it could not, `undefined` once it is connected. */
async function tryConnect(client: RedisClient): Promise<unknown> {
  // ioredis rejects `connect()` with its own "Connection is closed" and emits the cause as an event, for the
  // client and (on a Cluster) for each node; the listeners also keep ioredis from printing the events.
  let cause: Error | undefined;
  const keep = (error: Error) => (cause = telling(error) ?? cause);
  client.on('error', keep);
  client.on('node error', keep);
  try {
    await client.connect();
    return undefined;
  } catch (rejection) {
    return cause ?? rejection;
  }
}

/**
 * A failure of a command or of the connection as one line: the endpoint and the cause, as the lock provider
 * says it; Redis's own reply (other than a connection failure) with the endpoint before it.
 */
export function described(client: RedisClient, error: unknown): Error {
  // To the lock provider a MOVED reply is an outage (a Cluster's slots move); to the CLI it means the user
  // pointed it at one node of a Cluster, so it says what Redis answered and what to add.
  if (error instanceof Error && /^MOVED /.test(error.message)) {
    const hint = '(a Redis Cluster: add --cluster)';
    return new Error(`Redis ${describeRedisEndpoint(client)} answered: ${error.message} ${hint}`, { cause: error });
  }
  // Refused credentials or an untrusted certificate: Redis answers, so it is not said to be unreachable.
  const mistake = misconfiguration(error, client);
  if (mistake !== undefined) return new Error(`Redis ${describeRedisEndpoint(client)} is reachable, but ${mistake}`);
  const failure = redisFailure(client, error);
  if (failure instanceof LockProviderUnavailableError || !(failure instanceof Error)) return failure as Error;
  return new Error(`Redis ${describeRedisEndpoint(client)} answered: ${failure.message}`, { cause: error });
}

/** The error that says why, when `error` is one: a socket error, or a node's reply (`lastNodeError` of a Cluster). */
function telling(error: unknown): Error | undefined {
  if (!(error instanceof Error)) return undefined;
  if ((error as NodeJS.ErrnoException).code !== undefined || error.name === 'ReplyError') return error;
  const nodeError = (error as { lastNodeError?: Error }).lastNodeError;
  return nodeError?.name === 'ReplyError' ? nodeError : undefined;
}

/**
 * The startup nodes of a Cluster on `addresses`, and its nodes' options. User name, password and TLS
 * (`rediss://`) come from the first address that has them and apply to every node, as a Cluster's nodes share
 * them.
 */
function clusterSettings(addresses: readonly string[]): {
  startupNodes: { host: string; port: number }[];
  redisOptions: RedisOptions;
} {
  const urls = addresses.map((address) => new URL(address.includes('://') ? address : `redis://${address}`));
  const credentials = urls.find((url) => url.username || url.password);
  return {
    startupNodes: urls.map((url) => ({ host: url.hostname, port: Number(url.port || 6379) })),
    redisOptions: {
      ...ONE_SHOT,
      username: credentials?.username ? decodeURIComponent(credentials.username) : undefined,
      password: credentials?.password ? decodeURIComponent(credentials.password) : undefined,
      tls: urls.some((url) => url.protocol === 'rediss:') ? {} : undefined,
    },
  };
}

/** The CLI's connection to the apps' Redis under `keyPrefix`: their operator records, through the provider. */
export async function connectRedisStore(target: RedisTarget, keyPrefix: string): Promise<StoreConnection> {
  const client = await connectRedis(target);
  return {
    operatorProvider: new RedisLockProvider(client, { keyPrefix }).operatorProvider(),
    scope: `key prefix "${keyPrefix}"`,
    failureLine(error) {
      // Redis's own reply, also under the outage the provider made of it (MOVED), said the CLI's way.
      const reply = error instanceof LockProviderUnavailableError ? error.cause : error;
      if (reply instanceof Error && reply.name === 'ReplyError') return described(client, reply).message;
      return error instanceof LockProviderUnavailableError ? error.message : undefined;
    },
    close: async () => client.disconnect(),
  };
}
