import type { Cluster, Redis } from 'ioredis';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import type { RedisClient } from './redis-client.js';
import { describeRedisEndpoint } from './redis-endpoint.js';

/** ioredis's wordings of a call failed for want of a connection: none yet, or it closed. */
const NOT_CONNECTED = /isn't writeable|isn't ready and enableOfflineQueue/;
const CONNECTION_CLOSED = /^Connection is closed/;
/** ioredis's wording of a command its `commandTimeout` gave up on. */
const COMMAND_TIMED_OUT = /^Command timed out/;

/** What ioredis's own failures mean, by their wording. */
const IOREDIS_FAILURES: readonly [wording: RegExp, meaning: string][] = [
  [NOT_CONNECTED, 'not connected'],
  [CONNECTION_CLOSED, 'connection closed'],
  [COMMAND_TIMED_OUT, "no answer within the client's commandTimeout"],
  [/max retries per request/i, 'no connection within maxRetriesPerRequest reconnection attempts'],
  [/None of startup nodes is available/, 'no startup node answered'],
  [/Failed to refresh slots cache/, 'no node answered for the slot map'],
];

/**
 * Replies of a Redis that answers but cannot serve the module now, by the code they start with (Redis and
 * Valkey word the rest differently): an outage, like no answer at all.
 */
const UNAVAILABLE_REPLIES: Readonly<Record<string, string>> = {
  READONLY: 'a read-only replica answered (failover in progress?)',
  LOADING: 'still loading its dataset',
  BUSY: 'busy running a script',
  MOVED: "the key's slot is served by another node (a Cluster: use an ioredis Cluster client)",
  ASK: "the key's slot is migrating to another node (a Cluster: use an ioredis Cluster client)",
};

/**
 * The two wordings of a command the ACL refuses inside a script (no code of its own: `ERR`): Redis 7.0's
 * `The user executing the script can't run this command …`, and Valkey's and Redis 7.2's
 * `ACL failure in script: …`, which names the command.
 */
const SCRIPT_REFUSAL = /^ERR (The user executing the script can't run|ACL failure in script:)/;

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
export class RedisCommandRefusedError extends LockProviderUnavailableError {
  constructor(
    message: string,
    reason: string,
    /** What was refused: `EVALSHA`, `SET (run by acquire.lua)`, or `a command acquire.lua runs (one of SET, TIME)`. */
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
 * failed authentication) becomes a {@link LockProviderUnavailableError} naming the endpoint and the
 * cause, in place of ioredis's wording about its own queue; a refused command (ACL) a
 * {@link RedisCommandRefusedError}; another reply from Redis stays as it is. `script` is the Lua
 * script the failed call ran, for a refusal inside it.
 */
export function redisFailure(client: RedisClient, error: unknown, script?: ScriptCommands): unknown {
  if (!(error instanceof Error)) return error;
  const refusal = commandRefusal(client, error, script);
  if (refusal) return refusal;
  const unavailable = UNAVAILABLE_REPLIES[replyCode(error) ?? ''];
  if (error.name === 'ReplyError' && !unavailable && !isAuthFailure(error)) return error;
  const reason = unavailable
    ? `${unavailable}, ${replyCode(error)}`
    : (connectionFailure(error, client) ?? clientFailure(client, error));
  const message = `Redis ${describeRedisEndpoint(client)} is unreachable (${reason})`;
  const unanswered = COMMAND_TIMED_OUT.test(error.message);
  return new LockProviderUnavailableError(message, reason, { cause: error, unanswered });
}

/** Whether `failure` (a {@link redisFailure}) says only that the client had no connection. */
export function failedForNoConnection({ cause }: LockProviderUnavailableError): boolean {
  return cause instanceof Error && (NOT_CONNECTED.test(cause.message) || CONNECTION_CLOSED.test(cause.message));
}

/**
 * The code a Redis reply error starts with (`NOSCRIPT`, `NOPERM`, `ERR`…): what a reply means, where
 * the words after it differ between Redis and Valkey and between their versions.
 */
export function replyCode(error: unknown): string | undefined {
  return error instanceof Error ? /^([A-Z]+)(?: |$)/.exec(error.message)?.[1] : undefined;
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
  // A transaction (MULTI … EXEC) fails as a whole: EXECABORT, with the queued commands' own errors beside it,
  // or with the reply EXEC itself got after "because of:".
  const previous = (error as { previousErrors?: unknown[] }).previousErrors ?? [];
  const noPerm = [error, ...previous].find((candidate): candidate is Error => replyCode(candidate) === 'NOPERM');
  const execRefusal =
    replyCode(error) === 'EXECABORT' ? /because of: (NOPERM .*)$/.exec(error.message)?.[1] : undefined;
  let refused: string;
  let reply: string;
  if (noPerm) {
    reply = noPerm.message;
    // Redis names the command it refused; a refused key is the sent command's.
    refused = (namedCommand(reply) ?? sentCommand(noPerm))?.toUpperCase() ?? 'a command';
  } else if (execRefusal) {
    reply = execRefusal;
    refused = namedCommand(reply)?.toUpperCase() ?? 'EXEC';
  } else if (SCRIPT_REFUSAL.test(error.message)) {
    reply = error.message;
    const named = namedCommand(reply)?.toUpperCase();
    const runs = script ? `${script.file} runs` : 'the script runs';
    refused = named
      ? `${named} (run by ${script?.file ?? 'a script'})`
      : `a command ${runs}${script ? ` (one of ${script.commands.join(', ')})` : ''}`;
  } else {
    return undefined;
  }
  const user = redisUser(client) ?? 'default';
  const reason = `refused ${refused} for user "${user}": ${reply}`;
  return new RedisCommandRefusedError(`Redis ${describeRedisEndpoint(client)} ${reason}`, reason, refused, user, {
    cause: error,
  });
}

/** The command a refusal names (`… to run the 'set' command`): Redis 7.0 names it only outside scripts. */
function namedCommand(reply: string): string | undefined {
  return /'([^']+)' command/.exec(reply)?.[1];
}

/** The name of the command an ioredis reply error answered, if it says. */
function sentCommand(error: Error): string | undefined {
  return (error as { command?: { name?: string } }).command?.name;
}

/** The user name the client authenticates with, if it sets one (never its password). */
export function redisUser(client: RedisClient): string | undefined {
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
    return `authentication failed${user ? ` for user "${user}"` : ''}: ${replyCode(error) ?? error.message}`;
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
      if (isCertificateFailure(error)) return `TLS certificate not trusted: ${error.message}, ${code}`;
      return code;
  }
}

/** Redis refused the client's credentials: `WRONGPASS`, `NOAUTH`, or Redis 5's `ERR invalid password`. */
function isAuthFailure(error: Error): boolean {
  const code = replyCode(error);
  return (
    code === 'WRONGPASS' ||
    code === 'NOAUTH' ||
    /^ERR (invalid password|AUTH.*without any password)/.test(error.message)
  );
}

/** The TLS handshake failed on the server's certificate: no trusted CA signed it, or it names another host. */
function isCertificateFailure(error: Error): boolean {
  return /CERT|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER/.test((error as NodeJS.ErrnoException).code ?? '');
}

/**
 * Why a failure is a mistake in the client's configuration rather than an outage: Redis refused its
 * credentials, its ACL refused a command, or the server's certificate does not verify. `undefined` for
 * anything that may pass (refused connection, timeout, failover).
 */
export function misconfiguration(error: unknown, client: RedisClient): string | undefined {
  // Not `instanceof Error`: a socket's errors may come from another realm (a test runner's VM context).
  if (typeof (error as Error | undefined)?.message !== 'string') return undefined;
  if (error instanceof RedisCommandRefusedError) return error.reason;
  // A Cluster that reached no node says why in its last node's error.
  const nodeError = (error as { lastNodeError?: unknown }).lastNodeError;
  if (nodeError) return misconfiguration(nodeError, client);
  const cause =
    (error instanceof LockProviderUnavailableError && (error.cause as Error | undefined)) || (error as Error);
  if (typeof cause.message !== 'string') return undefined;
  return isAuthFailure(cause) || isCertificateFailure(cause) ? connectionFailure(cause, client) : undefined;
}
