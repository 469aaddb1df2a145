import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../test/support/redis-server.js';
import { ephemeralServerArgs, spawnRedisProcessInTempDir } from '../../test/support/redis-process.js';

const run = promisify(execFile);

/** The profile's file name in the server's temp dir; callgrind appends `.<n>` to each dump. */
const PROFILE = 'redis.callgrind';

/** A private `redis-server` running under valgrind's callgrind, whose executed instructions can be read. */
export interface CallgrindRedis {
  readonly port: number;
  /** Sets the instruction count to zero. */
  zero(): Promise<void>;
  /** Instructions the server executed since the last {@link zero} (or read), which zeroes the count again. */
  read(): Promise<number>;
  /**
   * The same less the server's timer (serverCron), which runs per wall-clock second: what commands cost, whatever
   * the machine's load.
   */
  readCommands(): Promise<number>;
  /** Kills the server and removes its temp dir, profiles included. */
  kill(): Promise<void>;
}

/**
 * Starts `redis-server` under `valgrind --tool=callgrind` on a free port. Instruction counts do not
 * depend on what else the machine is doing, so they compare two ways of asking Redis for the same
 * thing to about a percent, where timings on shared cores wander by several.
 */
export async function startCallgrindRedis(): Promise<CallgrindRedis> {
  const port = await freePort();
  const server = await spawnRedisProcessInTempDir(
    port,
    (dir) => ephemeralServerArgs(port, dir),
    (dir) => ['valgrind', '--quiet', '--tool=callgrind', `--callgrind-out-file=${join(dir, PROFILE)}`],
  );
  const control = (option: string) => run('callgrind_control', [option, String(server.pid)]);
  let dumps = 0;
  /** Dumps the count: the dump's path and its total. */
  const dump = async () => {
    await control('--dump');
    dumps += 1;
    // callgrind numbers the dumps of a run (<out>.1, <out>.2, ...), each holding the cost since the last.
    const file = join(server.dir, `${PROFILE}.${dumps}`);
    const summary = /^summary: (\d+)$/m.exec(await readFile(file, 'utf8'));
    if (!summary) throw new Error(`no summary line in callgrind dump ${file}`);
    return { file, total: Number(summary[1]) };
  };
  return {
    port,
    zero: () => control('--zero').then(() => undefined),
    read: async () => (await dump()).total,
    async readCommands() {
      const { file, total } = await dump();
      const { stdout } = await run('callgrind_annotate', ['--inclusive=yes', file], { maxBuffer: 1 << 26 });
      const timer = /^\s*([\d,]+) \([^)]*\)\s+\S*:serverCron /m.exec(stdout);
      return total - (timer ? Number(timer[1].replaceAll(',', '')) : 0);
    },
    kill: () => server.kill(),
  };
}
