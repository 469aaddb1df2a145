import { cpus, loadavg } from 'node:os';
import type { Redis } from 'ioredis';

/** One line naming the date, the machine and the Redis a benchmark ran on, for its report. */
export async function describeEnvironment(client: Redis): Promise<string> {
  const info = await client.info('server');
  return describeMachine(`Redis ${/redis_version:(\S+)/.exec(info)?.[1] ?? 'unknown'}`);
}

/** One line naming the date, the machine and `store` (its name and version), for a report. */
export function describeMachine(store: string): string {
  const cores = cpus();
  return `${new Date().toISOString()} · ${cores.length} cores (${cores[0]?.model.trim() ?? 'unknown CPU'}) · Node ${process.version} · ${store}`;
}

/** A positive number from the environment, or `fallback` when unset. */
export function numberFromEnv(name: string, fallback: number): number {
  const text = process.env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number (got "${text}")`);
  return value;
}

/**
 * The machine's load average, for a report: other processes on the shared cores move timed ratios, so a
 * reader needs to know how busy the machine was.
 */
export function loadAverage(): string {
  const [one, five, fifteen] = loadavg().map((load) => load.toFixed(2));
  return `load average ${one} / ${five} / ${fifteen} (1 / 5 / 15 min)`;
}

/** A comma-separated list of positive numbers from the environment, or `fallback` when unset. */
export function numberListFromEnv(name: string, fallback: readonly number[]): number[] {
  const text = process.env[name];
  if (text === undefined || text === '') return [...fallback];
  const values = text.split(',').map(Number);
  if (!values.every((value) => Number.isFinite(value) && value > 0)) {
    throw new Error(`${name} must be a comma-separated list of positive numbers (got "${text}")`);
  }
  return values;
}
