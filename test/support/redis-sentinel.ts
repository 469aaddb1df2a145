import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { RedisOptions } from 'ioredis';
import { freePort } from './redis-server.js';
import { spawnRedisProcessInTempDir } from './redis-process.js';

/** A private Sentinel monitoring one master. */
export interface PrivateSentinel {
  readonly port: number;
  /** ioredis options that reach the monitored master through this Sentinel. */
  readonly clientOptions: Required<Pick<RedisOptions, 'sentinels' | 'name'>>;
  /** SIGKILLs the Sentinel by PID and removes its temp dir. */
  stop(): Promise<void>;
}

/** Options of {@link startPrivateSentinel}. */
export interface PrivateSentinelOptions {
  /** The name clients ask for. Default `mymaster`. */
  readonly masterName?: string;
  /** How long the master may not answer before this Sentinel fails it over. Default Sentinel's, 30 s. */
  readonly downAfterMs?: number;
}

/**
 * Starts `redis-server <config> --sentinel` on a free port, monitoring the master on `masterPort`
 * (quorum 1, so this one Sentinel decides a failover alone). The config is a file in a temp dir of its
 * own, since Sentinel rewrites it.
 */
export async function startPrivateSentinel(
  masterPort: number,
  { masterName = 'mymaster', downAfterMs }: PrivateSentinelOptions = {},
): Promise<PrivateSentinel> {
  const port = await freePort();
  const sentinel = await spawnRedisProcessInTempDir(port, async (dir) => {
    const config = join(dir, 'sentinel.conf');
    const lines = [
      `port ${port}`,
      'bind 127.0.0.1',
      `dir ${dir}`,
      `sentinel monitor ${masterName} 127.0.0.1 ${masterPort} 1`,
    ];
    if (downAfterMs !== undefined) lines.push(`sentinel down-after-milliseconds ${masterName} ${downAfterMs}`);
    await writeFile(config, `${lines.join('\n')}\n`);
    return [config, '--sentinel'];
  });
  return {
    port,
    clientOptions: { sentinels: [{ host: '127.0.0.1', port }], name: masterName },
    stop: () => sentinel.kill(),
  };
}
