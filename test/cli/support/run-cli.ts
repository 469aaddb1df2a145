import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { runCli as runCliOfLib } from '../../../lib/cli/cli.js';

/** The built CLI, as `bin` in package.json names it (`npm test` builds it first, as `npm run build` does). */
const CLI = fileURLToPath(new URL('../../../dist/cjs/cli/main.js', import.meta.url));

/** How one run of the CLI ended. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** A CLI run that takes longer than this is killed, and the test fails with what it printed. */
const CLI_TIMEOUT_MS = 20_000;

/**
 * Runs `node dist/cjs/cli/main.js ...args` as a child process, asynchronously (the apps under test keep running
 * in this process meanwhile). Its environment has `PATH` and `env` only: no `REDIS_URL` unless given.
 */
export function runCli(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { env: { PATH: process.env.PATH, ...env }, timeout: CLI_TIMEOUT_MS },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number')
          reject(new Error(`nest-scheduler-lock ${args.join(' ')} did not exit: ${error.message}\n${stdout}${stderr}`));
        else resolve({ code: error ? (error.code as number) : 0, stdout, stderr });
      },
    );
  });
}

/**
 * Runs the CLI in this process (lib/cli/cli.ts, as the built bin runs it), with what the bin would print: each
 * line written ends with a line feed. For what the child process adds nothing to: arguments, views, masking.
 */
export async function runCliInProcess(args: readonly string[], env: NodeJS.ProcessEnv = {}): Promise<CliRun> {
  const [out, err]: string[][] = [[], []];
  const code = await runCliOfLib(args, env, {
    out: (text) => out.push(`${text}\n`),
    err: (text) => err.push(`${text}\n`),
  });
  return { code, stdout: out.join(''), stderr: err.join('') };
}

/** The CLI bound to one Redis and key prefix, as an operator of one cluster types it. */
export class Operator {
  constructor(
    private readonly connection: readonly string[],
    /** The CLI's environment, e.g. `DATABASE_URL`. */
    private readonly env: NodeJS.ProcessEnv = {},
    /** The built bin in a child process (end to end), or {@link runCliInProcess} (views and actions). */
    private readonly runner: typeof runCli = runCli,
  ) {}

  /** `--redis URL --prefix P --heartbeat …` plus `args`. */
  run(...args: string[]): Promise<CliRun> {
    return this.runner([...args, ...this.connection], this.env);
  }

  /** Runs `args --json`, expects exit code 0 and parses stdout. */
  async json<T>(...args: string[]): Promise<T> {
    const run = await this.run(...args, '--json');
    if (run.code !== 0) throw new Error(`${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return JSON.parse(run.stdout) as T;
  }

  /** Runs `args`, expects exit code 0 and nothing on stderr; resolves to stdout. */
  async text(...args: string[]): Promise<string> {
    const run = await this.run(...args);
    if (run.code !== 0 || run.stderr !== '') throw new Error(`${args.join(' ')} exited ${run.code}: ${run.stderr}`);
    return run.stdout;
  }
}

/**
 * The rows of a table the CLI printed, as objects keyed by its headers. Columns are at least two spaces apart
 * and no cell holds two spaces in a row, so that is where a line splits.
 */
export function tableRows(text: string): Record<string, string>[] {
  const [header, ...lines] = text.trimEnd().split('\n');
  const headers = header.split(/ {2,}/);
  return lines.map((line) => {
    const cells = line.split(/ {2,}/);
    expect(cells.length).toBeLessThanOrEqual(headers.length);
    // An empty last cell leaves no trace: lines end without spaces.
    return Object.fromEntries(headers.map((name, column) => [name, cells[column] ?? '']));
  });
}

/** The `label: value` lines of a view of one thing (`job NAME`), as an object. */
export function fields(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .trimEnd()
      .split('\n')
      .map((line) => {
        const [label, value] = /^([^:]+): +(.*)$/.exec(line)!.slice(1);
        return [label, value];
      }),
  );
}
