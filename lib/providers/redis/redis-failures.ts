import type { Cluster, Redis } from 'ioredis';
import { LockStoreUnavailableError } from '../../core/errors.js';
import type { RedisClient } from './redis-client.js';

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

/** A Lua script's file and the commands it runs, to name them when Redis refuses one. */
export interface ScriptCommands {
  readonly file: string;
  readonly commands: readonly string[];
}

/**
 * Redis refused the client's user a command: its ACL lacks the command (or one a script runs), or a key
 * is outside the user's key patterns. Every attempt that sends the command fails alike until the ACL
 * changes. The message names the endpoint, the command and the user.
 */
export class RedisCommandRefusedError extends LockStoreUnavailableError {
  constructor(
    message: string,
    reason: string,
    /** What was refused: `EVALSHA`, or `a command acquire.lua runs (one of SET, INCR)`. */
    readonly refused: string,
    /** The ACL user the client authenticates as (`default` without a user name). */
    readonly user: string,
    options: { cause: unknown },
  ) {
    super(message, reason, options);
  }
}

/**
 * What a failed command says about Redis: a connection-level failure (no connection, a refused or
 * failed authentication) becomes a {@link LockStoreUnavailableError} naming the endpoint and the
 * cause, in place of ioredis's wording about its own queue; a refused command (ACL) a
 * {@link RedisCommandRefusedError}; another reply from Redis stays as it is. `script` is the Lua
 * script the failed call ran, for a refusal inside it.
 */
export function redisFailure(client: RedisClient, error: unknown, script?: ScriptCommands): unknown {
  if (!(error instanceof Error)) return error;
  const refusal = commandRefusal(client, error, script);
  if (refusal) return refusal;
  if (error.name === 'ReplyError' && !isAuthFailure(error)) return error;
  const reason = connectionFailure(error, client) ?? clientFailure(client, error);
  const message = `Redis ${describeRedisEndpoint(client)} is unreachable (${reason})`;
  return new LockStoreUnavailableError(message, reason, { cause: error });
}

/**
 * A refusal by Redis's ACL: a `NOPERM` reply (also one a transaction was aborted for), or the error a
 * script gets when it runs a command its caller may not. `undefined` for any other error.
 */
function commandRefusal(
  client: RedisClient,
  error: Error,
  script: ScriptCommands | undefined,
): RedisCommandRefusedError | undefined {
  // A transaction (MULTI … EXEC) fails as a whole: EXECABORT, with the queued commands' own errors beside it.
  const previous = (error as { previousErrors?: unknown[] }).previousErrors ?? [];
  const noPerm = [error, ...previous].find(
    (candidate): candidate is Error => candidate instanceof Error && /\bNOPERM\b/.test(candidate.message),
  );
  let refused: string;
  let reply: string;
  if (noPerm) {
    reply = noPerm.message.slice(noPerm.message.indexOf('NOPERM'));
    // Redis names the command it refused; a refused key is the sent command's.
    refused = (/'([^']+)' command/.exec(reply)?.[1] ?? sentCommand(noPerm))?.toUpperCase() ?? 'a command';
  } else if (/user executing the script can't/i.test(error.message)) {
    reply = error.message;
    refused = script
      ? `a command ${script.file} runs (one of ${script.commands.join(', ')})`
      : 'a command the script runs';
  } else {
    return undefined;
  }
  const user = redisUser(client) ?? 'default';
  const reason = `refused ${refused} for user "${user}": ${reply}`;
  return new RedisCommandRefusedError(`Redis ${describeRedisEndpoint(client)} ${reason}`, reason, refused, user, {
    cause: error,
  });
}

/** The name of the command an ioredis reply error answered, if it says. */
function sentCommand(error: Error): string | undefined {
  return (error as { command?: { name?: string } }).command?.name;
}

/** The user name the client authenticates with, if it sets one (never its password). */
function redisUser(client: RedisClient): string | undefined {
  const options = client.isCluster ? (client as Cluster).options.redisOptions : (client as Redis).options;
  return options?.username || undefined;
}

/** What an error of ioredis's own says, and the client's state unless it is connected (a Cluster node failed). */
function clientFailure(client: RedisClient, error: Error): string {
  const meaning = IOREDIS_FAILURES.find(([wording]) => wording.test(error.message))?.[1] ?? error.message;
  return client.status === 'ready' ? meaning : `${meaning}, the client is ${client.status}`;
}

/**
 * Why a connection attempt of `client` failed, from the error ioredis emits; `undefined` when the error
 * does not say. A failed authentication names the user, when the client sets one.
 */
export function connectionFailure(error: Error, client: RedisClient): string | undefined {
  if (isAuthFailure(error)) {
    const user = redisUser(client);
    return `authentication failed${user ? ` for user "${user}"` : ''}: ${error.message.split(' ')[0]}`;
  }
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
      // A certificate the client's CA list does not vouch for, or one issued for another host.
      if (/CERT|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test(code))
        return `TLS certificate not trusted: ${error.message}, ${code}`;
      return code;
  }
}

function isAuthFailure(error: Error): boolean {
  return /^(WRONGPASS|NOAUTH)\b|invalid password|AUTH.*without any password/i.test(error.message);
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
