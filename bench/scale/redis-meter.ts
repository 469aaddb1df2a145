import type { Redis } from 'ioredis';
import type { CallgrindRedis } from '../support/callgrind-redis.js';

/** What Redis did over a window, as far as the meter can tell. */
export interface RedisUsage {
  /** CPU time of the server process (`INFO cpu`: used_cpu_user + used_cpu_sys), µs. */
  readonly cpuMicros?: number;
  /** Commands the server executed (`INFO commandstats`), those run inside scripts included, the meter's INFO not. */
  readonly commandsExecuted?: number;
  /** Instructions the server executed (callgrind). */
  readonly instructions?: number;
}

/** Reads what a Redis server did between two moments. */
export interface RedisMeter {
  begin(): Promise<void>;
  /** What the server did since {@link begin}. */
  end(): Promise<RedisUsage>;
}

interface InfoReading {
  readonly cpuMicros: number;
  readonly commandsExecuted: number;
}

async function readInfo(admin: Redis): Promise<InfoReading> {
  const cpu = await admin.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? Number.NaN);
  const cpuMicros = Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
  let commandsExecuted = 0;
  for (const [, name, calls] of (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    if (name !== 'info') commandsExecuted += Number(calls);
  }
  return { cpuMicros, commandsExecuted };
}

/** CPU and commands from `INFO` of a private server (nothing else uses it), through `admin`. */
export function infoMeter(admin: Redis): RedisMeter {
  let start: InfoReading | undefined;
  return {
    async begin() {
      start = await readInfo(admin);
    },
    async end() {
      if (!start) throw new Error('infoMeter: end() before begin()');
      const now = await readInfo(admin);
      return {
        cpuMicros: now.cpuMicros - start.cpuMicros,
        commandsExecuted: now.commandsExecuted - start.commandsExecuted,
      };
    },
  };
}

/** Instructions of a server running under callgrind. */
export function instructionMeter(server: CallgrindRedis): RedisMeter {
  return {
    begin: () => server.zero(),
    async end() {
      return { instructions: await server.read() };
    },
  };
}
