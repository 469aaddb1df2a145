import { performance } from 'node:perf_hooks';

/** Runs a command, turning its failure into an error that shows what it printed. */
export async function step(what: string, command: () => Promise<{ stdout: string; stderr: string }>): Promise<void> {
  try {
    await command();
  } catch (error) {
    // execFile's message is the command line and its stderr; test runners report on stdout too.
    const { stdout = '', message } = error as { stdout?: string; message: string };
    throw new Error(`${what} failed: ${message}\n${stdout}`.trimEnd());
  }
}

/** The time since `since` (a `performance.now()`), as `1.2 s`. */
export function seconds(since: number): string {
  return `${((performance.now() - since) / 1000).toFixed(1)} s`;
}

/**
 * The arguments of `nice` that run `command` at a lower CPU priority: for installs and compiles, so that the
 * real-time checks of the apps already installed (their instances, their specs) keep the CPU they need.
 */
export function niced(command: string, args: string[]): string[] {
  return ['-n', '10', command, ...args];
}
