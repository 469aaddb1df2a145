import { Logger } from '@nestjs/common';
import {
  SchedulerLockConfigurationError,
  assertKnownOptions,
  booleanOption,
  durationOption,
  lockDurations,
  MAX_TIMER_MS,
  positiveDurationOption,
  resolveLease,
  type LockDefaults,
} from '../core/provider/lock-configuration.js';
import { defaultLockedBy } from '../core/provider/default-locked-by.js';
import type { DurationInput } from '../core/provider/duration.js';
import { nonEmptyStringOption, wholeNumberOption } from '../core/provider/option-values.js';
import { quoted } from '../core/provider/message-text.js';
import type { LockProvider } from '../core/provider/lock-provider.js';
import { canReportOutages, PROVIDER_ABILITY_METHODS } from '../core/provider/provider-abilities.js';
import type { ProviderOutageMonitor } from '../core/provider/store-outage-report.js';
import { assertLockProvider } from '../core/provider/provider-checks.js';
import { DEFAULT_ACQUIRE_TIMEOUT } from '../core/executor/executor-settings.js';
import type { RunInstrumentation } from '../core/executor/run-instrumentation.js';
import { OPERATOR_ABILITY_METHODS } from '../operators/operator-abilities.js';
import { DEFAULT_HISTORY_LIMIT } from '../operators/operator-provider.js';
import { DEFAULT_HEALTH_POLICY } from '../operators/cluster-admin.js';
import type { HealthPolicy } from '../operators/job-health.js';
import { retryPolicy, type RetryPolicy } from '../occurrence/occurrence-policy.js';
import { optionsObject } from '../core/provider/option-values.js';
import type { JobHealthOptions, SchedulerLockModuleOptions } from './scheduler-lock-module-options.interface.js';
import { loadRedisOption } from './load-redis-option.js';
import { replicaAckOptions } from './replica-ack-options.js';
import { MODULE_OPTIONS_SUBJECT as SUBJECT } from './scheduler-lock.constants.js';

/** A clock a tick reads once, to pick its cron occurrence. */
export interface TickClock {
  now(): number;
}

const WALL_CLOCK: TickClock = { now: () => Date.now() };

/** The module's options, validated once at startup. */
export interface SchedulerLockSettings {
  readonly provider: LockProvider;
  readonly defaults: LockDefaults;
  readonly node: string;
  /** How long `app.close()` waits for runs in progress, in ms. */
  readonly shutdownTimeout: number;
  /** How long a lock attempt may take before the tick is skipped, in ms. */
  readonly acquireTimeout: number;
  /** How often this node publishes itself and its jobs for operators, and checks their health, in ms. */
  readonly heartbeatInterval: number;
  /** How strict job health is. */
  readonly health: HealthPolicy;
  /** How a failed occurrence is retried, for the jobs that do not say; `null`: not at all. */
  readonly retry: RetryPolicy | null;
  /** Closes the store client the module created (from `redis`); never one it was handed. */
  readonly closeStore?: () => Promise<unknown>;
  /** Reports outages of the module's Redis (its own client or the app's), or of a provider that reports its own. */
  readonly outages?: ProviderOutageMonitor;
  /** Wraps each locked run (tracing). */
  readonly instrumentation?: RunInstrumentation;
  /** Log each skipped tick (`locked`, `already-ran`, `paused`), not only emit it. */
  readonly logSkips: boolean;
  /** What a store that fails the startup check does to the startup: fail it, or log a warning. */
  readonly startupCheck: StartupCheck;
  /** The election whose leader runs the locked jobs that do not name one; `null` for none. */
  readonly defaultLeader: string | null;
  /** What a cron tick reads to pick its occurrence: the wall clock, or the testing kit's for a late tick. */
  readonly clock: TickClock;
}

/** See {@link SchedulerLockModuleOptions.startupCheck}. */
export type StartupCheck = 'fail' | 'warn';
const STARTUP_CHECKS: readonly StartupCheck[] = ['fail', 'warn'];

const DEFAULT_SHUTDOWN_TIMEOUT = 10_000;
const DEFAULT_HEARTBEAT_INTERVAL = 5_000;

/** Every option of {@link SchedulerLockModuleOptions}: any other key is a typo that would be ignored. */
const MODULE_OPTIONS: readonly (keyof SchedulerLockModuleOptions)[] = [
  'redis',
  'provider',
  'keyPrefix',
  'defaultLockAtMostFor',
  'defaultLockAtLeastFor',
  'node',
  'keepAlive',
  'shutdownTimeout',
  'acquireTimeout',
  'historyLimit',
  'heartbeatInterval',
  'health',
  'retry',
  'minReplicasToAck',
  'replicaAckTimeout',
  'instrumentation',
  'logSkips',
  'startupCheck',
  'defaultLeader',
];

/** Validates the module options and builds the lock provider they describe. */
export async function createSchedulerLockSettings(options: SchedulerLockModuleOptions): Promise<SchedulerLockSettings> {
  if (!options || typeof options !== 'object' || Array.isArray(options)) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: expected an object, got ${quoted(options)}`);
  }
  assertKnownOptions(options, MODULE_OPTIONS, SUBJECT, isGlobalHint);
  const keyPrefix =
    options.keyPrefix === undefined ? undefined : nonEmptyStringOption(options.keyPrefix, '', 'keyPrefix', SUBJECT);
  const node = nonEmptyStringOption(options.node, nodeNameOf(options.provider), 'node', SUBJECT);
  const redisOption = options.redis === undefined ? undefined : await loadRedisOption();
  redisOption?.assertRedisOption(options.redis);
  if ((options.redis === undefined) === (options.provider === undefined)) {
    const got = options.redis === undefined ? 'neither' : 'both';
    const unset = options.redis === undefined ? givenAsUndefined(options, 'redis', 'provider') : '';
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: set exactly one of "redis" and "provider" (got ${got})${unset}`,
    );
  }
  if (options.defaultLockAtMostFor === undefined) {
    const unset = givenAsUndefined(options, 'defaultLockAtMostFor');
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: defaultLockAtMostFor is required (for example '10m')${unset}`,
    );
  }
  const { startupCheck = 'fail' } = options;
  const logSkips = booleanOption(options.logSkips, false, 'logSkips', SUBJECT);
  const defaultLeader =
    options.defaultLeader === undefined
      ? null
      : nonEmptyStringOption(options.defaultLeader, '', 'defaultLeader', SUBJECT);
  if (!STARTUP_CHECKS.includes(startupCheck)) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: startupCheck must be 'fail' or 'warn' (got ${quoted(startupCheck)})`,
    );
  }
  const { lockAtMostFor, lockAtLeastFor } = lockDurations(
    { lockAtMostFor: options.defaultLockAtMostFor, lockAtLeastFor: options.defaultLockAtLeastFor },
    { lockAtMostFor: 0, lockAtLeastFor: 0 },
    ['defaultLockAtMostFor', 'defaultLockAtLeastFor'],
    SUBJECT,
  );
  const defaults = { lockAtMostFor, lockAtLeastFor, lease: resolveLease(options.keepAlive, undefined, SUBJECT) };
  const shutdownTimeout = timerOption(options.shutdownTimeout, DEFAULT_SHUTDOWN_TIMEOUT, 'shutdownTimeout', 0);
  const acquireTimeout = timerOption(options.acquireTimeout, DEFAULT_ACQUIRE_TIMEOUT, 'acquireTimeout');
  const heartbeatInterval = timerOption(options.heartbeatInterval, DEFAULT_HEARTBEAT_INTERVAL, 'heartbeatInterval');
  const health = healthPolicy(options.health);
  const retry = options.retry === undefined ? null : retryPolicy(options.retry, SUBJECT);
  const historyLimit = wholeNumberOption(options.historyLimit, DEFAULT_HISTORY_LIMIT, 'historyLimit', SUBJECT);
  const instrumentation = options.instrumentation;
  if (instrumentation !== undefined && typeof instrumentation?.around !== 'function') {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: instrumentation must have an around(run, task) method`);
  }
  const common = {
    defaults,
    node,
    shutdownTimeout,
    acquireTimeout,
    heartbeatInterval,
    health,
    retry,
    instrumentation,
    logSkips,
    startupCheck,
    defaultLeader,
    clock: WALL_CLOCK,
  };
  const replicaAck = replicaAckOptions(options, acquireTimeout);
  if (options.provider !== undefined) {
    refuseRedisOnlyOptions(options);
    assertLockProvider(options.provider, SUBJECT, [...PROVIDER_ABILITY_METHODS, ...OPERATOR_ABILITY_METHODS]);
    const { provider } = options;
    const outages = canReportOutages(provider) ? provider.reportOutages(new Logger('SchedulerLock')) : undefined;
    return { provider, ...common, outages };
  }
  const redisSettings = { keyPrefix, node, historyLimit, ...replicaAck };
  return { ...common, ...redisOption!.redisOptionStore(options.redis!, redisSettings, new Logger('SchedulerLock')) };
}

/** The `health` option, checked: each key known, `grace` a duration, `failingAfter` a whole number from 1. */
function healthPolicy(option: JobHealthOptions | undefined): HealthPolicy {
  if (option === undefined) return DEFAULT_HEALTH_POLICY;
  const subject = `${SUBJECT} health`;
  const given = optionsObject(option, ['grace', 'failingAfter', 'pauseAfter'], subject);
  return {
    grace: durationOption(given.grace, DEFAULT_HEALTH_POLICY.grace, 'grace', subject, MAX_TIMER_MS),
    failingAfter: wholeNumberOption(given.failingAfter, DEFAULT_HEALTH_POLICY.failingAfter, 'failingAfter', subject),
    pauseAfter: given.pauseAfter === undefined ? null : wholeNumberOption(given.pauseAfter, 0, 'pauseAfter', subject),
  };
}

/** A provider's own node name (`node`, when it has one), else `<hostname>:<pid>`: one name per node. */
function nodeNameOf(provider: unknown): string {
  const named = (provider as { node?: unknown } | undefined)?.node;
  return typeof named === 'string' && named !== '' ? named : defaultLockedBy();
}

/** `keyPrefix` and `historyLimit` shape the store the module builds for `redis`; a provider has its own. */
function refuseRedisOnlyOptions(options: SchedulerLockModuleOptions): void {
  for (const option of ['keyPrefix', 'historyLimit'] as const) {
    if (options[option] === undefined) continue;
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: ${option} goes with "redis" (got ${quoted(options[option])}); ` +
        `pass it to your provider's options instead`,
    );
  }
}

/** A duration the module waits on a timer: at most {@link MAX_TIMER_MS}, and greater than `min` (0) unless 0. */
function timerOption(value: DurationInput | undefined, fallback: number, option: string, min?: 0): number {
  if (min === 0) return durationOption(value, fallback, option, SUBJECT, MAX_TIMER_MS);
  return positiveDurationOption(value, fallback, option, SUBJECT, MAX_TIMER_MS);
}

/**
 * `; "redis" was given as undefined (…)` when the options have one of `keys` with the value `undefined`:
 * most often an unset environment variable (`redis: process.env.REDIS_URL`).
 */
function givenAsUndefined(options: object, ...keys: (keyof SchedulerLockModuleOptions)[]): string {
  const given = keys.filter((key) => Object.hasOwn(options, key));
  if (given.length === 0) return '';
  const names = given.map((key) => `"${key}"`).join(' and ');
  return `; ${names} ${given.length === 1 ? 'was' : 'were'} given as undefined (an unset environment variable?)`;
}

/** `isGlobal` is a forRoot() option beside the module options, not one of them: a common slip. */
function isGlobalHint(key: string): string | undefined {
  if (key !== 'isGlobal') return undefined;
  return (
    '; isGlobal goes beside the options in forRoot(), or beside useFactory / useClass / useExisting in ' +
    'forRootAsync()'
  );
}
