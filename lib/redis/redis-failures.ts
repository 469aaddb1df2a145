import type { Redis } from 'ioredis';
import { LockStoreUnavailableError } from '../core/errors.js';
import type { RedisClient } from './redis-scripts.js';

/** What ioredis's own failures mean, by their wording. */
const IOREDIS_FAILURES: readonly [wording: RegExp, meaning: string][] = [
  [/isn't writeable|isn't ready and enableOfflineQueue/, 'not connected'],
  [/^Connection is closed/, 'connection closed'],
  [/max retries per request/i, 'no connection within maxRetriesPerRequest reconnection attempts'],
  [/None of startup nodes is available/, 'no startup node answered'],
  [/Failed to refresh slots cache/, 'no node answered for the slot map'],
];

/** How many nodes of a Sentinel or Cluster list a message names before "and N more". */
const NODES_NAMED = 3;

/**
 * Where a client connects, for messages: `host:port`, the Sentinel master and sentinels, or the
 * Cluster's startup nodes. Never a password or user name: only hosts and ports are read.
 */
export function describeRedisEndpoint(client: RedisClient): string {
  if (client.isCluster) {
    const startupNodes = (client as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
    return `Cluster ${nodeList(startupNodes)}`;
  }
  const { host, port, path, sentinels, name } = (client as Redis).options;
  if (sentinels?.length) return `master "${name ?? 'mymaster'}" via Sentinel ${nodeList(sentinels)}`;
  if (path) return path;
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}

/**
 * What a failed command says about Redis: a connection-level failure (no connection, a refused or
 * failed authentication) becomes a {@link LockStoreUnavailableError} naming the endpoint and the
 * cause, in place of ioredis's wording about its own queue; a reply from Redis stays as it is.
 */
export function redisFailure(client: RedisClient, error: unknown): unknown {
  if (!(error instanceof Error) || (error.name === 'ReplyError' && !isAuthFailure(error))) return error;
  const reason = connectionFailure(error) ?? clientFailure(client, error);
  const message = `Redis ${describeRedisEndpoint(client)} is unreachable (${reason})`;
  return new LockStoreUnavailableError(message, reason, { cause: error });
}

/** What an error of ioredis's own says, and the client's state unless it is connected (a Cluster node failed). */
function clientFailure(client: RedisClient, error: Error): string {
  const meaning = IOREDIS_FAILURES.find(([wording]) => wording.test(error.message))?.[1] ?? error.message;
  return client.status === 'ready' ? meaning : `${meaning}, the client is ${client.status}`;
}

/** Why a connection attempt failed, from the error ioredis emits; `undefined` when the error does not say. */
export function connectionFailure(error: Error): string | undefined {
  if (isAuthFailure(error)) return `authentication failed: ${error.message.split(' ')[0]}`;
  const code = (error as NodeJS.ErrnoException).code;
  switch (code) {
    case undefined:
      return undefined;
    case 'ECONNREFUSED':
      return 'connection refused, ECONNREFUSED';
    case 'ETIMEDOUT':
      return 'connect timeout, ETIMEDOUT';
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `host not found, ${code}`;
    case 'ECONNRESET':
      return 'connection reset, ECONNRESET';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
      return `host unreachable, ${code}`;
    default:
      return code;
  }
}

function isAuthFailure(error: Error): boolean {
  return /^(WRONGPASS|NOAUTH|NOPERM)\b|invalid password|AUTH.*without any password/i.test(error.message);
}

/** `host:port` of each node as ioredis accepts them (objects, `host:port`, URLs, bare ports), hiding credentials. */
function nodeList(nodes: readonly unknown[]): string {
  const named = nodes.slice(0, NODES_NAMED).map(hostPort);
  const more = nodes.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

function hostPort(node: unknown): string {
  if (typeof node === 'number') return `localhost:${node}`;
  if (typeof node === 'string') {
    try {
      const url = new URL(node.includes('://') ? node : `redis://${node}`);
      return `${url.hostname}:${url.port || 6379}`;
    } catch {
      return 'an unparsable node address';
    }
  }
  const { host, port } = (node ?? {}) as { host?: string; port?: number };
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}
