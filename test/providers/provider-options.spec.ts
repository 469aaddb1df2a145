import { InMemoryLockProvider, SchedulerLockConfigurationError } from '../../lib/index.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { unconnectedClients } from '../support/unconnected-clients.js';

const { client, pool, connect } = unconnectedClients();

type Construct = (options: object) => unknown;
const STORES: [string, Construct][] = [
  ['RedisLockProvider', (options) => new RedisLockProvider(client, options)],
  ['PostgresLockProvider', (options) => new PostgresLockProvider(pool, options)],
  ['InMemoryLockProvider', (options) => new InMemoryLockProvider(options)],
];

/** The message `construct(options)` fails with, checked to be a configuration error. */
function refusal(construct: Construct, options: object): string {
  try {
    construct(options);
  } catch (error) {
    expect(error).toBeInstanceOf(SchedulerLockConfigurationError);
    return (error as Error).message;
  }
  throw new Error(`expected ${JSON.stringify(options)} to be refused`);
}

describe.each(STORES)('%s options', (store, construct) => {
  it.each<[string, number]>([
    ['0 (a division by zero in PostgreSQL, no limit in Redis)', 0],
    ['-1 (Redis kept none)', -1],
    ['2.5 (a fraction)', 2.5],
    ['1e12 (beyond an integer column)', 1e12],
    ['NaN', NaN],
  ])('refuse a historyLimit of %s, naming it and the value', (_, historyLimit) => {
    expect(refusal(construct, { historyLimit })).toBe(
      `${store} options: historyLimit must be a whole number from 1 to 2147483647 (got ${historyLimit})`,
    );
  });

  it('refuse a misspelled option, with the option meant', () => {
    expect(refusal(construct, { histroyLimit: 10 })).toBe(
      `${store} options: unknown option "histroyLimit"; did you mean "historyLimit"?`,
    );
    expect(refusal(construct, { nodee: 'node-a' })).toBe(
      `${store} options: unknown option "nodee"; did you mean "node"?`,
    );
  });

  it('refuse an empty node and one that is not a string', () => {
    expect(refusal(construct, { node: '' })).toBe(`${store} options: node must be a non-empty string (got "")`);
    expect(refusal(construct, { node: 42 })).toBe(`${store} options: node must be a non-empty string (got 42)`);
  });

  it('accept the documented range of historyLimit', () => {
    expect(() => construct({ historyLimit: 1 })).not.toThrow();
    expect(() => construct({ historyLimit: 2 ** 31 - 1 })).not.toThrow();
  });
});

describe('PostgresLockProvider options', () => {
  afterEach(() => connect.mockClear());

  it.each<[string, unknown, string]>([
    ['SQL', '2000; DROP TABLE canary', '"2000; DROP TABLE canary"'],
    ['a number as text', '2000', '"2000"'],
    ['0, which PostgreSQL reads as no timeout', 0, '0'],
    ['a fraction', 2.5, '2.5'],
    ['a negative number', -1, '-1'],
    ['Infinity', Infinity, 'Infinity'],
    ['past the longest timer once pg adds its second', 2 ** 31 - 1, '2147483647'],
    ['true', true, 'true'],
  ])('refuse a statementTimeout that is %s, before any SQL', (_, statementTimeout, got) => {
    expect(refusal((options) => new PostgresLockProvider(pool, options), { statementTimeout })).toBe(
      'PostgresLockProvider options: statementTimeout (ms, or false) must be a whole number from 1 to 2147482647 ' +
        `(got ${got})`,
    );
    expect(connect).not.toHaveBeenCalled();
  });

  it('accept a whole number of ms and false', () => {
    expect(() => new PostgresLockProvider(pool, { statementTimeout: 1 })).not.toThrow();
    expect(() => new PostgresLockProvider(pool, { statementTimeout: false })).not.toThrow();
    expect(connect).not.toHaveBeenCalled();
  });

  it('refuse a createTables that is not a boolean, and a misspelled statementTimeout', () => {
    const construct = (options: object) => new PostgresLockProvider(pool, options);
    expect(refusal(construct, { createTables: 'false' })).toBe(
      'PostgresLockProvider options: createTables must be true or false (got "false")',
    );
    expect(refusal(construct, { statementTimout: 500 })).toBe(
      'PostgresLockProvider options: unknown option "statementTimout"; did you mean "statementTimeout"?',
    );
  });
});

describe('RedisLockProvider options', () => {
  const construct = (options: object) => new RedisLockProvider(client, options);

  it.each<[string, object, string]>([
    ['an empty keyPrefix', { keyPrefix: '' }, 'keyPrefix must be a non-empty string (got "")'],
    [
      'a minReplicasToAck of 0',
      { minReplicasToAck: 0 },
      'minReplicasToAck must be a whole number from 1 to 2147483647 (got 0)',
    ],
    [
      'a replicaAckTimeout without minReplicasToAck',
      { replicaAckTimeout: 100 },
      'replicaAckTimeout needs minReplicasToAck',
    ],
    [
      'a replicaAckTimeout of 0',
      { minReplicasToAck: 1, replicaAckTimeout: 0 },
      'replicaAckTimeout must be greater than 0 (got 0)',
    ],
  ])('refuse %s', (_, options, problem) => {
    expect(refusal(construct, options)).toBe(`RedisLockProvider options: ${problem}`);
  });

  it('refuse options that are not an object', () => {
    expect(refusal(construct as Construct, [] as never)).toBe(
      'RedisLockProvider options: expected an options object (got [])',
    );
  });
});

describe('InMemoryLockProvider options', () => {
  it('refuse a store that is not an in-memory store', () => {
    expect(refusal((options) => new InMemoryLockProvider(options), { store: {} })).toBe(
      'InMemoryLockProvider options: store must be an InMemoryStore (got {})',
    );
  });
});
