import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Where Debian's `libfaketime` package puts the library: `/usr/lib/<multiarch triplet>/faketime/`. */
const LIBRARY_DIRS = ['/usr/lib', '/usr/local/lib'];
const LIBRARY = join('faketime', 'libfaketime.so.1');
const INSTALL = 'apt-get update -qq && apt-get install -y -qq faketime';

/** The path of libfaketime's preload library, or `undefined` when it is not installed. */
export function findLibfaketime(): string | undefined {
  for (const dir of LIBRARY_DIRS) {
    const candidates = [join(dir, LIBRARY), ...subdirs(dir).map((sub) => join(dir, sub, LIBRARY))];
    const found = candidates.find((path) => existsSync(path));
    if (found) return found;
  }
  return undefined;
}

/**
 * The path of libfaketime's preload library, installing Debian's `faketime` package first (with
 * apt-get, as root) when it is missing, and saying so through `say`.
 */
export function ensureLibfaketime(say: (line: string) => void): string {
  const found = findLibfaketime();
  if (found) return found;
  say(`libfaketime is not installed: installing Debian's faketime package (${INSTALL})`);
  // apt's progress lines are noise here; its errors (stderr) are not.
  execFileSync('sh', ['-c', INSTALL], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
  const installed = findLibfaketime();
  if (!installed)
    throw new Error(
      `libfaketime still not found after \`${INSTALL}\` (looked for */${LIBRARY} under ${LIBRARY_DIRS.join(', ')})`,
    );
  say(`libfaketime installed: ${installed}`);
  return installed;
}

/**
 * The environment that runs a process with its wall clock `skewMs` ahead (behind when negative) of the
 * machine's, through the library directly rather than the `faketime` wrapper (which forks and waits, so
 * `kill -9` of its PID would not reach the app). The monotonic clock, which timers and
 * `process.hrtime` read, is left alone. libfaketime takes whole seconds here.
 */
export function faketimeEnv(library: string, skewMs: number): NodeJS.ProcessEnv {
  if (!Number.isInteger(skewMs / 1000)) throw new Error(`faketime skew must be whole seconds (got ${skewMs} ms)`);
  const seconds = skewMs / 1000;
  return {
    LD_PRELOAD: library,
    FAKETIME: `${seconds >= 0 ? '+' : '-'}${Math.abs(seconds)}`,
    FAKETIME_DONT_FAKE_MONOTONIC: '1',
  };
}

function subdirs(dir: string): string[] {
  try {
    return readdirSync(dir, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => entry.name);
  } catch {
    return [];
  }
}
