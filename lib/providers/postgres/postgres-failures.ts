import type { Pool, PoolConfig } from 'pg';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';

/** Where and as whom a pool connects. */
interface ConnectionTarget {
  readonly host?: string;
  readonly port?: number | string;
  readonly database?: string;
  readonly user?: string;
}

/**
 * Where and as whom node-postgres connects `pool`, read by its own client class from the pool's options: the
 * connection string over the other options, then the `PG*` variables, then the OS user (`USER`).
 */
function connectionTarget(pool: Pool): ConnectionTarget {
  const { Client } = pool as unknown as { Client?: new (options: PoolConfig) => ConnectionTarget };
  try {
    // A client that is never connected: its constructor only reads the settings.
    if (Client) return new Client(pool.options);
  } catch {
    // Settings node-postgres rejects: its first connection says why.
  }
  return pool.options as PoolConfig;
}

/** Where a pool connects, for messages: `host:port/database`. Never a user name or password. */
export function describePostgresEndpoint(pool: Pool): string {
  const { host, port, database } = connectionTarget(pool);
  return `${host || 'localhost'}:${port || 5432}/${database ?? ''}`;
}

/** The user name node-postgres sends for `pool`; `undefined` when neither its settings nor the environment give one. */
export function postgresUser(pool: Pool): string | undefined {
  return connectionTarget(pool).user || undefined;
}

/** Socket errors, by their code. */
const SOCKET_FAILURES: Readonly<Record<string, string>> = {
  ECONNREFUSED: 'connection refused',
  ECONNRESET: 'connection reset',
  ETIMEDOUT: 'connect timeout',
  EHOSTUNREACH: 'host unreachable',
  ENOTFOUND: 'host not found',
  EAI_AGAIN: 'host not found',
  EPIPE: 'connection lost',
};

/** SQLSTATE `query_canceled`: a statement ran past `statement_timeout`. */
const STATEMENT_TIMEOUT = '57014';
/** node-postgres's wording of a statement its own deadline gave up on (`query_timeout`). */
const QUERY_READ_TIMEOUT = /^Query read timeout/;

/** What node-postgres's own failures mean, by their wording. */
const CLIENT_FAILURES: readonly [wording: RegExp, meaning: string][] = [
  [/^Connection terminated unexpectedly/, 'connection lost'],
  [/connection timeout|timeout exceeded when trying to connect/i, 'connect timeout'],
  [/not queryable|Client was closed/, 'connection lost'],
  [QUERY_READ_TIMEOUT, 'no answer, not even at statement_timeout (server frozen or cut off?)'],
];

/** SQLSTATEs that mean the server cannot serve the provider now, or the pool's connection settings are wrong. */
const SERVER_FAILURES: Readonly<Record<string, string>> = {
  '57P01': 'server shutting down',
  '57P02': 'server crashed',
  '57P03': 'server starting up or shutting down',
  '53300': 'too many connections',
  '3D000': 'database does not exist',
};
/** SQLSTATEs of refused credentials: the server's message names the user it refused (never a password). */
const REFUSED_CREDENTIALS = new Set(['28P01', '28000']);

/**
 * What a failed statement says about PostgreSQL: a connection-level failure (no connection, a server that
 * is down or restarting, a failed authentication, a statement that ran past `statement_timeout`) becomes a
 * {@link LockProviderUnavailableError} naming `endpoint` and the cause; an error the server answered a
 * statement with (a missing privilege, say) stays as it is.
 */
export function postgresFailure(endpoint: string, error: unknown, statementTimeout: number | false): unknown {
  // Not `instanceof Error`: a socket's error comes from Node's own realm, which a vm context (Jest) does not share.
  if (typeof (error as Error | undefined)?.message !== 'string') return error;
  const code = (error as { code?: unknown }).code;
  const reason = failureReason(error as Error, typeof code === 'string' ? code : undefined, statementTimeout);
  if (reason === undefined) return error;
  const unanswered = code === STATEMENT_TIMEOUT || QUERY_READ_TIMEOUT.test((error as Error).message);
  return new LockProviderUnavailableError(`PostgreSQL ${endpoint} is unreachable (${reason})`, reason, {
    cause: error,
    unanswered,
  });
}

function failureReason(error: Error, code: string | undefined, statementTimeout: number | false): string | undefined {
  if (code === STATEMENT_TIMEOUT) return `no answer within ${statementTimeout}ms (statement_timeout)`;
  if (code !== undefined && SOCKET_FAILURES[code]) return `${SOCKET_FAILURES[code]}, ${code}`;
  if (code !== undefined && SERVER_FAILURES[code]) return `${SERVER_FAILURES[code]}, ${code}`;
  // As Redis's outage line names the user it refused: `password authentication failed for user "ops"`.
  if (code !== undefined && REFUSED_CREDENTIALS.has(code)) return `credentials refused: ${error.message}, ${code}`;
  if (code?.startsWith('08')) return `connection failure, ${code}`;
  return CLIENT_FAILURES.find(([wording]) => wording.test(error.message))?.[1];
}
