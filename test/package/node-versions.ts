import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** Where {@link installNode} keeps the Node majors it installs: under node_modules, so `npm ci` starts it anew. */
export const NODE_CACHE = fileURLToPath(new URL('../../../node_modules/.cache/test-package', import.meta.url));

/** A Node.js to run apps' scripts with: its version, and the directory to put first on PATH. */
export interface NodeRuntime {
  /** `v24.21.0`. */
  version: string;
  /** Holds a `node` executable; `undefined` for the Node running this script (PATH as it is). */
  binDir: string | undefined;
}

/** The Node running this script (the machine's), as a {@link NodeRuntime}. */
export const MACHINE_NODE: NodeRuntime = { version: process.version, binDir: undefined };

/**
 * Node `major` from the npm registry's `node` package (`npm install --prefix <cacheDir>/node-<major> node@<major>`),
 * without touching the machine's Node; kept in `cacheDir` for the next run. Several majors can install at once.
 */
export async function installNode(major: number, cacheDir: string): Promise<NodeRuntime> {
  const prefix = join(cacheDir, `node-${major}`);
  const binDir = join(prefix, 'node_modules', '.bin');
  const node = join(binDir, 'node');
  if (!existsSync(node)) {
    await run('npm', ['install', '--prefix', prefix, '--no-audit', '--no-fund', '--no-save', `node@${major}`]);
  }
  const { stdout } = await run(node, ['--version']);
  return { version: stdout.trim(), binDir };
}

/** The environment that runs commands (npm, and the node its scripts call) on `runtime`. */
export function environmentFor(runtime: NodeRuntime, env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  if (runtime.binDir === undefined) return env;
  return { ...env, PATH: `${runtime.binDir}:${env.PATH ?? ''}` };
}

/** The major version of `runtime`: 24 for `v24.21.0`. */
export function majorOf(runtime: NodeRuntime): number {
  return Number(runtime.version.slice(1).split('.')[0]);
}
