import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '../../test/support/redis-server.js';
import { ephemeralServerArgs, spawnRedisProcess } from '../../test/support/redis-process.js';

const run = promisify(execFile);

/** A private `redis-server` running under valgrind's callgrind, whose executed instructions can be read. */
export interface CallgrindRedis {
  readonly port: number;
  /** Sets the instruction count to zero. */
  zero(): Promise<void>;
  /** Instructions the server executed since the last {@link zero} (or read), which zeroes the count again. */
  read(): Promise<number>;
  /** Kills the server and removes its profile files. */
  kill(): Promise<void>;
}

/**
 * Starts `redis-server` under `valgrind --tool=callgrind` on a free port. Instruction counts do not
 * depend on what else the machine is doing, so they compare two ways of asking Redis for the same
 * thing to a fraction of a percent, where timings on shared cores wander by several.
 */
export async function startCallgrindRedis(): Promise<CallgrindRedis> {
  const port = await freePort();
  const dir = await mkdtemp(join(tmpdir(), `nsl-callgrind-${port}-`));
  const outFile = join(dir, 'redis.callgrind');
  const server = await spawnRedisProcess(ephemeralServerArgs(port, dir), port, ['valgrind', '--quiet', '--tool=callgrind', `--callgrind-out-file=${outFile}`]);
  const control = (option: string) => run('callgrind_control', [option, String(server.pid)]);
  let dumps = 0;
  return {
    port,
    zero: () => control('--zero').then(() => undefined),
    async read() {
      await control('--dump');
      dumps += 1;
      // callgrind numbers the dumps of a run (<out>.1, <out>.2, ...), each holding the cost since the last.
      const dump = `${outFile}.${dumps}`;
      const summary = /^summary: (\d+)$/m.exec(await readFile(dump, 'utf8'));
      if (!summary) throw new Error(`no summary line in callgrind dump ${dump}`);
      return Number(summary[1]);
    },
    async kill() {
      await server.kill();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
