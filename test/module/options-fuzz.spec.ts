import { InMemoryLockProvider, SchedulerLockConfigurationError } from '../../lib/index.js';
import { createSchedulerLockSettings } from '../../lib/nest/scheduler-lock.settings.js';
import { PostgresLockProvider } from '../../lib/providers/postgres/index.js';
import { SchedulerLockTest, TestLockProvider, type ProviderOverrides } from '../../lib/testing/index.js';
import {
  durationMs,
  isIdentifier,
  isNonEmptyString,
  isOptionsObject,
  isPositiveDuration,
  isWholeNumber,
  MAX_INT,
  misspelled,
  PASSWORD,
  pick,
  randomValue,
  seededRandom,
  type Random,
} from '../support/fuzz-values.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { unconnectedClients } from '../support/unconnected-clients.js';

const SEED = 20_261_127;
const CASES_PER_SUBJECT = 800;

const { client, pool, connect } = unconnectedClients();

/** Whether the docs (TSDoc of the option) allow `value`. */
type Allowed = (value: unknown) => boolean;
const optional =
  (allowed: Allowed): Allowed =>
  (value) =>
    value === undefined || allowed(value);
const whole = optional((value) => isWholeNumber(value, 1, MAX_INT));
const name = optional(isNonEmptyString);
const boolean = optional((value) => typeof value === 'boolean');
const timer = optional((value) => isPositiveDuration(value, MAX_INT));

/** The options of one constructor: what each allows, the options beside it, and values that should pass. */
interface Subject {
  readonly prefix: string;
  readonly options: Readonly<Record<string, Allowed>>;
  base(option: string): Record<string, unknown>;
  /** Whether the constructor takes no options at all (`undefined`). */
  readonly optionsOptional: boolean;
  /** Constructs with `options`, or uses them (a promise when that is async). */
  construct(options: unknown): unknown;
  readonly good?: Readonly<Record<string, () => unknown>>;
}

const inMemory = new InMemoryLockProvider();
const SUBJECTS: Subject[] = [
  {
    prefix: 'SchedulerLockModule options',
    options: {
      redis: (value) => value === undefined, // beside a provider
      provider: (value) => typeof (value as { lock?: unknown } | undefined)?.lock === 'function',
      keyPrefix: name,
      defaultLockAtMostFor: (value) => isPositiveDuration(value),
      defaultLockAtLeastFor: optional((value) => (durationMs(value) ?? Infinity) <= 60_000),
      node: name,
      keepAlive: optional(
        (value) =>
          typeof value === 'boolean' ||
          (isOptionsObject(value) && Object.keys(value).every((key) => key === 'lease') && timer(value.lease)),
      ),
      shutdownTimeout: optional((value) => (durationMs(value) ?? Infinity) <= MAX_INT),
      acquireTimeout: timer,
      historyLimit: whole,
      heartbeatInterval: timer,
      health: optional(
        (value) =>
          isOptionsObject(value) &&
          Object.keys(value).every((key) => ['grace', 'failingAfter', 'pauseAfter'].includes(key)) &&
          optional((grace) => (durationMs(grace) ?? Infinity) <= MAX_INT)(value.grace) &&
          whole(value.failingAfter) &&
          whole(value.pauseAfter),
      ),
      retry: optional(
        (value) =>
          isOptionsObject(value) &&
          Object.keys(value).every((key) => ['retries', 'backoff'].includes(key)) &&
          value.retries !== undefined &&
          whole(value.retries) &&
          optional((backoff) => durationMs(backoff) !== undefined)(value.backoff),
      ),
      minReplicasToAck: whole,
      replicaAckTimeout: optional((value) => timer(value) && Math.ceil(durationMs(value)!) < 2_000),
      instrumentation: optional((value) => typeof (value as { around?: unknown } | null)?.around === 'function'),
      logSkips: boolean,
      startupCheck: optional((value) => value === 'fail' || value === 'warn'),
    },
    base: (option) => {
      const redis = { redis: client, defaultLockAtMostFor: '1m' };
      if (option === 'minReplicasToAck' || option === 'keyPrefix' || option === 'historyLimit') return redis;
      if (option === 'replicaAckTimeout') return { ...redis, minReplicasToAck: 1 };
      return { provider: inMemory, defaultLockAtMostFor: '1m' };
    },
    optionsOptional: false,
    construct: async (options) => {
      const settings = await createSchedulerLockSettings(options as never);
      settings.outages?.close?.();
    },
    good: { provider: () => inMemory, instrumentation: () => ({ around: (run: () => unknown) => run() }) },
  },
  {
    prefix: 'RedisLockProvider options',
    options: {
      keyPrefix: name,
      node: name,
      historyLimit: whole,
      minReplicasToAck: whole,
      replicaAckTimeout: timer,
    },
    base: (option) => (option === 'replicaAckTimeout' ? { minReplicasToAck: 1 } : {}),
    optionsOptional: true,
    construct: (options) => new RedisLockProvider(client, options as never),
  },
  {
    prefix: 'PostgresLockProvider',
    options: {
      schema: optional(isIdentifier),
      tablePrefix: optional(isIdentifier),
      node: name,
      createTables: boolean,
      historyLimit: whole,
      statementTimeout: optional((value) => value === false || isWholeNumber(value, 1, MAX_INT - 1_000)),
    },
    base: () => ({}),
    optionsOptional: true,
    construct: (options) => new PostgresLockProvider(pool, options as never),
  },
  {
    prefix: 'InMemoryLockProvider options',
    options: { node: name, historyLimit: whole, store: (value) => value === undefined },
    base: () => ({}),
    optionsOptional: true,
    construct: (options) => new InMemoryLockProvider(options as never),
  },
  {
    prefix: 'SchedulerLockTest.override() options',
    options: { store: (value) => value instanceof TestLockProvider, node: isNonEmptyString },
    base: () => ({ store: new TestLockProvider(), node: 'node-1' }),
    optionsOptional: false,
    construct: (options) => SchedulerLockTest.override(noBuilder, options as never),
    good: { store: () => new TestLockProvider() },
  },
];

const testStore = new TestLockProvider();
SUBJECTS.push({
  prefix: 'TestLockProvider.hold("sweep") options',
  options: { as: name, for: optional((value) => isPositiveDuration(value)) },
  base: () => ({}),
  optionsOptional: true,
  construct: async (options) => (await testStore.hold('sweep', options as never)).release(),
});

/** A builder that does nothing: override() is checked for its options alone. */
const noBuilder: ProviderOverrides<void> = {
  overrideProvider: () => ({ useFactory: () => undefined }),
};

/** One case: the options, and whether the docs allow them all. */
interface Case {
  readonly options: unknown;
  readonly allowed: boolean;
  /** What a refusal must name: the option given a value, or the unknown key. */
  readonly names: string;
}

function randomCase(random: Random, subject: Subject): Case {
  const roll = random();
  const option = pick(random, Object.keys(subject.options));
  const base = subject.base(option);
  if (roll < 0.05) {
    const options = randomValue(random);
    return { options, allowed: subject.optionsOptional && allowsAll(subject, options), names: '' };
  }
  if (roll < 0.15) {
    const typo = misspelled(random, option);
    return { options: { ...base, [typo]: randomValue(random) }, allowed: false, names: `unknown option "${typo}"` };
  }
  const good = subject.good?.[option];
  const value = good && random() < 0.2 ? good() : randomValue(random);
  return { options: { ...base, [option]: value }, allowed: subject.options[option](value), names: option };
}

/** Whether `options` is none, or an options object whose every key the docs allow with its value. */
function allowsAll(subject: Subject, options: unknown): boolean {
  if (options === undefined) return true;
  if (!isOptionsObject(options)) return false;
  return Object.entries(options).every(
    ([key, value]) => Object.hasOwn(subject.options, key) && subject.options[key](value),
  );
}

/** What went wrong with `kase`, or `undefined` when the constructor did what the docs say. */
async function mismatch(subject: Subject, kase: Case): Promise<string | undefined> {
  let error: unknown;
  try {
    await subject.construct(kase.options);
  } catch (thrown) {
    error = thrown;
  }
  const given = shown(kase.options);
  if (error === undefined) return kase.allowed ? undefined : `accepted ${given}`;
  const message = (error as Error).message;
  if (kase.allowed) return `refused ${given}: ${message}`;
  if (!(error instanceof SchedulerLockConfigurationError)) return `refused ${given} with ${String(error)}`;
  if (!message.startsWith(subject.prefix) || !message.includes(kase.names)) {
    return `refused ${given} without naming ${kase.names}: ${message}`;
  }
  return message.includes(PASSWORD) ? `printed a password for ${given}: ${message}` : undefined;
}

function shown(value: unknown): string {
  if (!isOptionsObject(value)) return String(typeof value === 'symbol' ? value.toString() : value);
  const entries = Object.entries(value).map(([key, member]) => `${key}: ${describeMember(member)}`);
  return `{ ${entries.join(', ')} }`;
}

function describeMember(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'symbol' || typeof value === 'function') return typeof value;
  if (typeof value === 'object' && value !== null) return Array.isArray(value) ? `[${String(value)}]` : 'object';
  return String(value);
}

it.each(SUBJECTS.map((subject) => [subject.prefix, subject] as const))(
  '%s: accepts what the docs allow and refuses the rest, naming the option (seeded fuzz)',
  async (_, subject) => {
    const random = seededRandom(SEED);
    const cases = Array.from({ length: CASES_PER_SUBJECT }, () => randomCase(random, subject));
    const mismatches: string[] = [];
    for (const kase of cases) {
      const found = await mismatch(subject, kase);
      if (found !== undefined) mismatches.push(found);
    }

    expect(mismatches.slice(0, 10)).toEqual([]);
    expect(cases.filter((kase) => kase.allowed).length).toBeGreaterThan(CASES_PER_SUBJECT / 10);
    expect(connect).not.toHaveBeenCalled();
  },
);
