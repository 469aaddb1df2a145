import { defaultLockedBy } from '../../core/provider/default-locked-by.js';
import { booleanOption, MAX_TIMER_MS } from '../../core/provider/lock-configuration.js';
import { nonEmptyStringOption, optionsObject, wholeNumberOption } from '../../core/provider/option-values.js';
import { DEFAULT_HISTORY_LIMIT } from '../../operators/operator-provider.js';
import { quoted } from '../../core/provider/message-text.js';

/**
 * Options of {@link PostgresLockProvider}, checked when it is constructed: a value outside what each option says,
 * or a key that is none of these, throws naming the option and the value.
 */
export interface PostgresLockProviderOptions {
  /**
   * The schema of the tables; it must exist. Letters, digits and underscores, not starting with a digit, at most
   * 58 characters. Default `public`.
   */
  schema?: string;
  /**
   * Prefix of the tables' names: `<tablePrefix>locks`, `<tablePrefix>history`, … Letters, digits and underscores,
   * not starting with a digit, at most 58 characters. Default `scheduler_lock_`.
   */
  tablePrefix?: string;
  /**
   * Stored with each lock and run so an operator can see who holds it: a non-empty string. Default
   * `<hostname>:<pid>`. The module's own `node` option does not reach a provider the app builds: set it here.
   */
  node?: string;
  /** Creates the tables on first use when they are missing (`CREATE TABLE IF NOT EXISTS`): a boolean. Default true. */
  createTables?: boolean;
  /** How many runs (and operator actions) each job's history keeps: a whole number from 1 to 2^31-1. Default 50. */
  historyLimit?: number;
  /**
   * The `statement_timeout` (ms) the provider sets on each pool connection it uses, so that a statement that
   * cannot finish in time is rolled back instead of taking a lock late: a whole number of ms from 1 to
   * 2147482647 (2^31-1 less the second pg waits beyond it). Make it your `acquireTimeout` (default 2 s, the
   * module's). `false` leaves the connections' setting alone: for a pool the app shares.
   */
  statementTimeout?: number | false;
}

export const DEFAULT_TABLE_PREFIX = 'scheduler_lock_';
/** The module's default `acquireTimeout`: a statement gets as long as a lock attempt. */
export const DEFAULT_STATEMENT_TIMEOUT = 2_000;

/** The longest `statementTimeout`: pg waits a second longer for the answer, on a Node.js timer. */
const MAX_STATEMENT_TIMEOUT = MAX_TIMER_MS - 1_000;

/** A `statementTimeout` other than `false`: a whole number of ms, never text, as it goes to the server. */
function statementTimeoutMs(value: unknown): number {
  return wholeNumberOption(value, 0, 'statementTimeout (ms, or false)', SUBJECT, [1, MAX_STATEMENT_TIMEOUT]);
}

const SUBJECT = 'PostgresLockProvider options';

/** Every option of {@link PostgresLockProviderOptions}: any other key is a typo that would be ignored. */
const OPTIONS: readonly (keyof PostgresLockProviderOptions)[] = [
  'schema',
  'tablePrefix',
  'node',
  'createTables',
  'historyLimit',
  'statementTimeout',
];

/** The provider's options, checked, with their defaults (`schema` and `tablePrefix`: see `postgresTables`). */
export function postgresProviderSettings(options: PostgresLockProviderOptions | undefined) {
  const given = optionsObject(options, OPTIONS, SUBJECT);
  const { schema = 'public', tablePrefix = DEFAULT_TABLE_PREFIX, statementTimeout = DEFAULT_STATEMENT_TIMEOUT } = given;
  return {
    schema,
    tablePrefix,
    node: nonEmptyStringOption(given.node, defaultLockedBy(), 'node', SUBJECT),
    createTables: booleanOption(given.createTables, true, 'createTables', SUBJECT),
    historyLimit: wholeNumberOption(given.historyLimit, DEFAULT_HISTORY_LIMIT, 'historyLimit', SUBJECT),
    statementTimeout: statementTimeout === false ? (false as const) : statementTimeoutMs(statementTimeout),
  };
}

/** A plain SQL identifier: quoted in statements, so it is kept to what needs no escaping. */
const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,57}$/;

/**
 * What is wrong with `value` as a schema or table prefix, after the option's name; `undefined` when it is a
 * plain identifier. The CLI asks before it connects.
 */
export function identifierProblem(value: unknown): string | undefined {
  if (typeof value === 'string' && IDENTIFIER.test(value)) return undefined;
  return (
    'must be letters, digits and underscores, starting with a letter or an underscore, at most 58 characters ' +
    `(got ${quoted(value)})`
  );
}
