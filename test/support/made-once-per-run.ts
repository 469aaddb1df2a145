import { access, open, readFile, rename, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { waitUntil } from './wait-until.js';

/** What the run's teardown (run-dir-teardown.cjs) stops and removes: server PIDs and temp dirs. */
export interface RunResources {
  readonly pids: readonly number[];
  readonly dirs: readonly string[];
}

/** How long a spec waits for another worker to make the run's thing: a Cluster converges in up to 20 s. */
const MADE_BY_OTHER_TIMEOUT_MS = 60_000;

/** The temp dir of this Jest run (run-dir-setup.cjs); undefined outside Jest (the chaos soak). */
export function runDir(): string | undefined {
  return process.env.NSL_RUN_DIR;
}

/**
 * The run's `name`d thing (a server's ports, a data dir): the first spec that asks, in any worker, makes it
 * under a lock file in the run's dir and records it, with the PIDs and dirs the run's teardown stops and
 * removes; every other spec waits for that record. `value` must survive JSON.
 */
export async function madeOncePerRun<T>(
  name: string,
  make: () => Promise<RunResources & { readonly value: T }>,
): Promise<T> {
  const dir = runDir();
  if (dir === undefined) throw new Error(`NSL_RUN_DIR is unset: run this spec with Jest, whose globalSetup sets it`);
  const record = join(dir, `${name}.json`);
  if (await takeLock(join(dir, `${name}.lock`))) {
    // A failure is recorded too, so the specs waiting in other workers fail at once with its reason.
    const made = await make().catch((error: unknown) => ({ error: String(error), pids: [], dirs: [] }));
    await writeFile(`${record}.partial`, JSON.stringify(made));
    await rename(`${record}.partial`, record);
  } else {
    await waitUntil(() => exists(record), `another spec made this run's ${name}`, {
      timeoutMs: MADE_BY_OTHER_TIMEOUT_MS,
      intervalMs: 50,
    });
  }
  const made = JSON.parse(await readFile(record, 'utf8')) as { value: T } | { error: string };
  if ('error' in made) throw new Error(`This run's ${name} could not be made: ${made.error}`);
  return made.value;
}

/** Creates `path` if no one has: true for the one caller that did. */
async function takeLock(path: string): Promise<boolean> {
  try {
    await (await open(path, 'wx')).close();
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}
