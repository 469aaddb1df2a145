import { randomInt } from 'node:crypto';
import type { ChaosStoreKind } from './journal.js';

/** What `npm run chaos` is asked to do. */
export interface ChaosOptions {
  /** Seeds the fault plan: the same seed, length and app count give the same faults. */
  readonly seed: number;
  readonly seconds: number;
  readonly apps: number;
  /** The store the apps lock in, on a private server the soak starts: `redis` (default) or `postgres`. */
  readonly store: ChaosStoreKind;
  /** Where the run log and the report go (default: a new temp dir). */
  readonly out?: string;
  /** Only analyse this run log (a `run.jsonl` of an earlier soak), run nothing. */
  readonly analyze?: string;
}

const USAGE = `npm run chaos -- [--store redis|postgres] [--seed N] [--minutes M | --seconds S] [--apps N] [--out DIR]
  [--analyze RUN_LOG] (or CHAOS_STORE, CHAOS_SEED, CHAOS_MINUTES, CHAOS_SECONDS, CHAOS_APPS, CHAOS_OUT)`;
const STORES: readonly ChaosStoreKind[] = ['redis', 'postgres'];
const DEFAULT_MINUTES = 10;

/** A bad command line: its message names the option and the value, and ends with the usage. */
export class ChaosUsageError extends Error {
  override readonly name = 'ChaosUsageError';
  constructor(problem: string) {
    super(`${problem}\nUsage: ${USAGE}`);
  }
}
const DEFAULT_APPS = 5;
/** The skews go from -4 s to +4 s: two apps at least, and more than 9 would share skews. */
const MAX_APPS = 9;

/** Reads flags (`--seed 1234` or `--seed=1234`), then the environment; throws with the usage on a bad value. */
export function parseChaosOptions(argv: readonly string[], env: NodeJS.ProcessEnv): ChaosOptions {
  const flags = new Map<string, string>();
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s, 2);
    if (!flag.startsWith('--')) throw new ChaosUsageError(`Unexpected argument "${argv[i]}"`);
    const value = inline ?? argv[++i];
    if (value === undefined) throw new ChaosUsageError(`${flag} needs a value`);
    flags.set(flag.slice(2), value);
  }
  const known = ['store', 'seed', 'minutes', 'seconds', 'apps', 'out', 'analyze'];
  const unknown = [...flags.keys()].filter((flag) => !known.includes(flag));
  if (unknown.length) throw new ChaosUsageError(`Unknown option(s) ${unknown.map((f) => `--${f}`).join(', ')}`);
  const read = (name: string) => flags.get(name) ?? env[`CHAOS_${name.toUpperCase()}`];

  const minutes = read('minutes');
  const seconds = read('seconds');
  if (minutes !== undefined && seconds !== undefined)
    throw new ChaosUsageError('Give --minutes or --seconds, not both');
  const store = read('store') ?? 'redis';
  if (!STORES.includes(store as ChaosStoreKind))
    throw new ChaosUsageError(`--store must be one of ${STORES.join(', ')} (got "${store}")`);
  return {
    store: store as ChaosStoreKind,
    seed: read('seed') === undefined ? randomInt(1, 2 ** 31) : whole('seed', read('seed')!, 0, 2 ** 32 - 1),
    seconds:
      seconds !== undefined
        ? whole('seconds', seconds, 1, 86_400)
        : Math.round(positive('minutes', minutes ?? String(DEFAULT_MINUTES)) * 60),
    apps: whole('apps', read('apps') ?? String(DEFAULT_APPS), 2, MAX_APPS),
    out: read('out'),
    analyze: read('analyze'),
  };
}

/** Evenly spread whole-second skews from -4 s to +4 s: 5 apps get -4, -2, 0, +2, +4 s. */
export function skewsFor(apps: number): number[] {
  return Array.from({ length: apps }, (_, i) => Math.round(-4 + (8 * i) / (apps - 1)) * 1000);
}

function whole(name: string, text: string, min: number, max: number): number {
  const value = Number(text);
  if (!Number.isInteger(value) || value < min || value > max) {
    throw new ChaosUsageError(`--${name} must be a whole number from ${min} to ${max} (got "${text}")`);
  }
  return value;
}

function positive(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0)
    throw new ChaosUsageError(`--${name} must be a positive number (got "${text}")`);
  return value;
}
