import { withoutCredentials } from '../core/provider/message-text.js';
import { ClusterAdmin, UnknownJobError } from '../operators/cluster-admin.js';
import { parseInvocation, USAGE, type Invocation } from './arguments.js';
import { runCommand } from './commands.js';
import { ElectionAdmin } from '../operators/election-admin.js';
import { connectStore, type StoreConnection } from './store-connection.js';
import { UsageError } from './store-target.js';
import { printable, printableJson, printableLines } from './terminal-text.js';

/** Where the CLI writes. */
export interface CliOutput {
  out(text: string): void;
  err(text: string): void;
}

const NAME = 'nest-scheduler-lock';

/**
 * Runs one command line of the CLI; resolves to its exit code: 0 done, 1 failed (one line on stderr, never a
 * stack or a password), 2 usage error (the usage text on stderr). Every text from the store (job and node names,
 * actors, reasons, errors) is printed without its control characters: escaped, as `\u001b`.
 */
export async function runCli(args: readonly string[], env: NodeJS.ProcessEnv, output: CliOutput): Promise<number> {
  let invocation: Invocation | 'help';
  try {
    invocation = parseInvocation(args, env);
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    // The message may quote an argument: a store URL typed where a command or job name goes.
    output.err(`${NAME}: ${printable(masked(error.message, args, env))}\n\n${USAGE}`);
    return 2;
  }
  if (invocation === 'help') {
    output.out(USAGE);
    return 0;
  }
  let connection: StoreConnection | undefined;
  try {
    connection = await connectStore(invocation.store);
    const admin = new ClusterAdmin(connection.operatorProvider, invocation.heartbeatInterval, invocation.health);
    const elections = new ElectionAdmin(connection.operatorProvider, admin);
    const result = await runCommand(admin, elections, invocation, connection.scope);
    // Text from the store is made printable: views cell by cell, the rest here, JSON inside its strings.
    if (invocation.json) output.out(printableJson(result.json));
    else if (result.text) output.out(printableLines(result.text));
    if (result.failure === undefined) return 0;
    output.err(`${NAME}: ${printable(result.failure)}`);
    return 1;
  } catch (error) {
    output.err(`${NAME}: ${printable(masked(failureLine(error, connection), args, env))}`);
    return 1;
  } finally {
    await connection?.close();
  }
}

/** A failure as one line: what the store or the cluster said, without the client's or Node's internals. */
function failureLine(error: unknown, connection: StoreConnection | undefined): string {
  if (error instanceof UnknownJobError) return `${error.message} (${connection?.scope})`;
  const said = connection?.failureLine(error);
  if (said !== undefined) return said;
  return error instanceof Error ? error.message : String(error);
}

/** `line` with each argument and store variable it may quote as {@link withoutCredentials} masks it. */
function masked(line: string, args: readonly string[], env: NodeJS.ProcessEnv): string {
  let text = line;
  for (const value of [...args, env.REDIS_URL, env.DATABASE_URL]) {
    const shown = value && withoutCredentials(value);
    if (value && shown !== value) text = text.split(value).join(shown);
  }
  return text;
}
