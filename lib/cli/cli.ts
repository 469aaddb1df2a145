import { LockStoreUnavailableError } from '../core/errors.js';
import { withoutCredentials } from '../core/messages.js';
import { ClusterAdmin, UnknownJobError } from '../operators/cluster-admin.js';
import { RedisLockProvider } from '../providers/redis/redis-lock-provider.js';
import type { RedisClient } from '../providers/redis/redis-scripts.js';
import { parseInvocation, USAGE, UsageError, type Invocation } from './arguments.js';
import { runCommand } from './commands.js';
import { connectRedis, described } from './redis-connection.js';
import { printable, printableLines } from './terminal-text.js';

/** Where the CLI writes. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

const NAME = 'nest-scheduler-lock';

/**
 * Runs one command line of the CLI; resolves to its exit code: 0 done, 1 failed (one line on stderr, never a
 * stack or a password), 2 usage error (the usage text on stderr). Every text from Redis (job and node names,
 * actors, reasons, errors) is printed without its control characters: escaped, as `\u001b`.
 */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv, output: CliOutput): Promise<number> {
  let invocation: Invocation | 'help';
  try {
    invocation = parseInvocation(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The message may quote an argument: a Redis URL typed where a command or job name goes.
    output.err(`${NAME}: ${printable(withoutCredentials(error.message))}\n\n${USAGE}`);
    return 2;
  }
  if (invocation === 'help') {
    output.out(USAGE);
    return 0;
  }
  let client: RedisClient | undefined;
  try {
    client = await connectRedis(invocation.redis);
    const provider = new RedisLockProvider(client, { keyPrefix: invocation.keyPrefix });
    const admin = new ClusterAdmin(provider.operatorStore(), invocation.heartbeatInterval);
    const result = await runCommand(admin, invocation);
    // JSON escapes control characters itself; text from Redis is made printable: views cell by cell, the rest here.
    if (invocation.json) output.out(JSON.stringify(result.json, null, 2));
    else if (result.text) output.out(printableLines(result.text));
    if (result.failure === undefined) return 0;
    output.err(`${NAME}: ${printable(result.failure)}`);
    return 1;
  } catch (error) {
    output.err(`${NAME}: ${printable(withoutCredentials(failureLine(error, client, invocation.keyPrefix)))}`);
    return 1;
  } finally {
    client?.disconnect();
  }
}

/** A failure as one line: what Redis or the cluster said, without ioredis's or Node's internals. */
function failureLine(error: unknown, client: RedisClient | undefined, keyPrefix: string): string {
  if (error instanceof UnknownJobError) return `${error.message} (key prefix "${keyPrefix}")`;
  // Redis's own reply, also under the outage the provider made of it (MOVED), said the CLI's way.
  const reply = error instanceof LockStoreUnavailableError ? error.cause : error;
  if (client && reply instanceof Error && reply.name === 'ReplyError') return described(client, reply).message;
  if (error instanceof LockStoreUnavailableError) return error.message;
  return error instanceof Error ? error.message : String(error);
}
