import { LockStoreUnavailableError } from '../core/provider/errors.js';
import { ClusterAdmin, UnknownJobError } from '../operators/cluster-admin.js';
import { RedisLockProvider } from '../providers/redis/redis-lock-provider.js';
import type { RedisClient } from '../providers/redis/redis-client.js';
import { parseInvocation, USAGE, UsageError, type Invocation } from './arguments.js';
import { runCommand } from './commands.js';
import { connectRedis, described } from './redis-connection.js';

/** Where the CLI writes. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

const NAME = 'nest-scheduler-lock';

/**
 * Runs one command line of the CLI; resolves to its exit code: 0 done, 1 failed (one line on stderr, never a
 * stack or a password), 2 usage error (the usage text on stderr).
 */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv, output: CliOutput): Promise<number> {
  let invocation: Invocation | 'help';
  try {
    invocation = parseInvocation(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    output.err(`${NAME}: ${error.message}\n\n${USAGE}`);
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
    if (invocation.json) output.out(JSON.stringify(result.json, null, 2));
    else if (result.text) output.out(result.text);
    if (result.failure === undefined) return 0;
    output.err(`${NAME}: ${result.failure}`);
    return 1;
  } catch (error) {
    output.err(`${NAME}: ${failureLine(error, client, invocation.keyPrefix)}`);
    return 1;
  } finally {
    client?.disconnect();
  }
}

/** A failure as one line: what Redis or the cluster said, without ioredis's or Node's internals. */
function failureLine(error: unknown, client: RedisClient | undefined, keyPrefix: string): string {
  if (error instanceof UnknownJobError) return `${error.message} (key prefix "${keyPrefix}")`;
  if (error instanceof LockStoreUnavailableError) return error.message;
  if (client && error instanceof Error && error.name === 'ReplyError') return described(client, error).message;
  return error instanceof Error ? error.message : String(error);
}
