import { DEFAULT_TABLE_PREFIX, identifierProblem } from '../providers/postgres/postgres-options.js';
import { DEFAULT_KEY_PREFIX } from '../providers/redis/redis-options.js';

/** Where the CLI connects: one Redis, or a Redis Cluster through its startup nodes. */
export interface RedisTarget {
  /** `redis://` / `rediss://` URLs or `host:port`; a Cluster's startup nodes when {@link cluster}. */
  readonly addresses: readonly string[];
  readonly cluster: boolean;
}

/** The store the apps share, and where in it their records are: the CLI reads and steers the cluster there. */
export type StoreTarget =
  | { readonly store: 'redis'; readonly redis: RedisTarget; readonly keyPrefix: string }
  | { readonly store: 'postgres'; readonly url: string; readonly schema: string; readonly tablePrefix: string };

/** The command line's options that say which store, and where in it. */
export interface StoreOptions {
  readonly redis?: string;
  readonly cluster?: boolean;
  readonly prefix?: string;
  readonly postgres?: string;
  readonly schema?: string;
  readonly 'table-prefix'?: string;
}

/** The options that belong to one store only, with the option the other store has instead. */
const REDIS_ONLY = [
  ['cluster', 'PostgreSQL has no cluster option'],
  ['prefix', 'on PostgreSQL the apps are found by --schema and --table-prefix'],
] as const;
const POSTGRES_ONLY = [
  ['schema', 'on Redis the apps are found by --prefix'],
  ['table-prefix', 'on Redis the apps are found by --prefix'],
] as const;

/** A command line the CLI cannot run; exit code 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/**
 * The store of a command line: `--redis URL` (or `REDIS_URL`) or `--postgres URL` (or `DATABASE_URL`). An
 * option given wins over the environment; with neither option, exactly one of the variables must be set. Each
 * URL is checked here, so a mistyped one is a usage error; a message never quotes a URL.
 * @throws UsageError
 */
export function storeTarget(options: StoreOptions, env: NodeJS.ProcessEnv): StoreTarget {
  if (options.redis !== undefined && options.postgres !== undefined)
    throw new UsageError('--redis and --postgres both given: the CLI reads one store');
  const store = chosenStore(options, env);
  const misplaced = (store === 'redis' ? POSTGRES_ONLY : REDIS_ONLY).find(([option]) => options[option] !== undefined);
  if (misplaced)
    throw new UsageError(
      `--${misplaced[0]} is not an option of ${store === 'redis' ? 'Redis' : 'PostgreSQL'}: ${misplaced[1]}`,
    );
  if (store === 'redis')
    return {
      store,
      redis: redisTarget((options.redis ?? env.REDIS_URL)!, options.cluster ?? false),
      keyPrefix: nonEmpty(options.prefix ?? DEFAULT_KEY_PREFIX, '--prefix'),
    };
  return {
    store,
    url: postgresUrl(
      options.postgres ?? env.DATABASE_URL!,
      options.postgres === undefined ? 'DATABASE_URL' : '--postgres',
    ),
    schema: identifier(options.schema ?? 'public', '--schema'),
    tablePrefix: identifier(options['table-prefix'] ?? DEFAULT_TABLE_PREFIX, '--table-prefix'),
  };
}

function chosenStore(options: StoreOptions, env: NodeJS.ProcessEnv): StoreTarget['store'] {
  if (options.redis !== undefined) return 'redis';
  if (options.postgres !== undefined) return 'postgres';
  const [redis, postgres] = [set(env.REDIS_URL), set(env.DATABASE_URL)];
  if (redis && postgres)
    throw new UsageError(
      'REDIS_URL and DATABASE_URL are both set: unset the other one for this command ' +
        '(e.g. REDIS_URL= nest-scheduler-lock jobs), or give --redis URL or --postgres URL',
    );
  if (redis) return 'redis';
  if (postgres) return 'postgres';
  throw new UsageError(
    'no store given: --redis URL or REDIS_URL for Redis, --postgres URL or DATABASE_URL for PostgreSQL',
  );
}

function set(value: string | undefined): boolean {
  return value !== undefined && value.trim() !== '';
}

function redisTarget(redis: string, cluster: boolean): RedisTarget {
  if (redis.trim() === '') throw new UsageError('--redis must not be empty');
  const addresses = redis
    .split(',')
    .map((address) => address.trim())
    .filter(Boolean);
  addresses.forEach(checkAddress);
  return { addresses, cluster: cluster || addresses.length > 1 };
}

function checkAddress(address: string, index: number): void {
  const which = `--redis address ${index + 1}`;
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(address)?.[1].toLowerCase();
  if (scheme !== undefined && scheme !== 'redis' && scheme !== 'rediss')
    throw new UsageError(`${which} must be redis:// or rediss:// (got ${scheme}://)`);
  let url: URL;
  try {
    url = new URL(scheme ? address : `redis://${address}`);
  } catch {
    throw new UsageError(`${which} is not a URL or host:port`);
  }
  if (url.hostname === '') throw new UsageError(`${which} has no host`);
}

/** A `postgres://` or `postgresql://` URL, as node-postgres reads `connectionString`. */
function postgresUrl(value: string, from: '--postgres' | 'DATABASE_URL'): string {
  const url = value.trim();
  if (url === '') throw new UsageError(`${from} must not be empty`);
  const scheme = /^([a-z][a-z0-9+.-]*):\/\//i.exec(url)?.[1].toLowerCase();
  if (scheme !== 'postgres' && scheme !== 'postgresql')
    throw new UsageError(
      `${from} must be a postgres:// or postgresql:// URL (got ${scheme === undefined ? 'no scheme' : `${scheme}://`})`,
    );
  try {
    new URL(url);
  } catch {
    throw new UsageError(`${from} is not a URL`);
  }
  return url;
}

/** `value`, if the provider takes it as a schema or table prefix: checked before the CLI connects. */
function identifier(value: string, option: string): string {
  const problem = identifierProblem(value);
  if (problem) throw new UsageError(`${option} ${problem}`);
  return value;
}

/** `value`, unless blank. */
function nonEmpty(value: string, option: string): string {
  if (value.trim() === '') throw new UsageError(`${option} must not be empty`);
  return value;
}
