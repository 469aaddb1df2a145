import type { Redis } from 'ioredis';
import type { CallgrindRedis } from '../support/callgrind-redis.js';
import type { StoreMeter } from './store-meter.js';

interface InfoReading {
  readonly cpuMicros: number;
  readonly commandsExecuted: number;
  readonly executionMicros: number;
}

/** The commands that run a script: their usec holds the script's own commands (counted again by name). */
const SCRIPT_COMMANDS = new Set(['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro']);

async function readInfo(admin: Redis): Promise<InfoReading> {
  const cpu = await admin.info('cpu');
  const seconds = (field: string) => Number(new RegExp(`^${field}:([\\d.]+)`, 'm').exec(cpu)?.[1] ?? Number.NaN);
  const cpuMicros = Math.round((seconds('used_cpu_user') + seconds('used_cpu_sys')) * 1e6);
  let commandsExecuted = 0;
  let executionMicros = 0;
  const stats = (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=(\d+),usec=(\d+)/g);
  for (const [, name, calls, usec] of stats) {
    if (name !== 'info') commandsExecuted += Number(calls);
    if (SCRIPT_COMMANDS.has(name)) executionMicros += Number(usec);
  }
  return { cpuMicros, commandsExecuted, executionMicros };
}

/** CPU and commands from `INFO` of a private server (nothing else uses it), through `admin`. */
export function infoMeter(admin: Redis): StoreMeter {
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
        executionMicros: now.executionMicros - start.executionMicros,
      };
    },
  };
}

/** Instructions of a server running under callgrind. */
export function instructionMeter(server: CallgrindRedis): StoreMeter {
  return {
    begin: () => server.zero(),
    async end() {
      return { instructions: await server.read() };
    },
  };
}
