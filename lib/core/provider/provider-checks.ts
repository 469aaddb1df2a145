import { SchedulerLockConfigurationError, type RunLockConfiguration } from './lock-configuration.js';
import type { LockProvider, SimpleLock } from './lock-provider.js';
import { canRenewLeases, PROVIDER_ABILITY_METHODS } from './provider-abilities.js';

/**
 * How messages name a provider (or a lock): by its class, which is what its author knows it by; a
 * plain object has no class worth naming.
 */
export function describeProvider(provider: unknown): string {
  return className(provider) ?? '(a plain object)';
}

function className(value: unknown): string | undefined {
  const name = (value as { constructor?: { name?: unknown } } | null | undefined)?.constructor?.name;
  return typeof name === 'string' && name !== '' && name !== 'Object' ? name : undefined;
}

/**
 * Checks at startup what can be checked before the first lock: that `provider` is an object with a
 * `lock()` method, and that each ability it has (see `provider-abilities.ts`, and the layers above that add
 * their own: `abilityMethods`) is a method.
 */
export function assertLockProvider(
  provider: unknown,
  subject: string,
  abilityMethods: readonly string[] = PROVIDER_ABILITY_METHODS,
): asserts provider is LockProvider {
  if (typeof provider !== 'object' || provider === null) {
    throw new SchedulerLockConfigurationError(
      `${subject}: provider must be a LockProvider object (got ${String(provider)})`,
    );
  }
  const label = `provider ${describeProvider(provider)}`;
  const members = provider as Record<string, unknown>;
  if (typeof members.lock !== 'function') {
    throw new SchedulerLockConfigurationError(
      `${subject}: ${label} has no lock() method (lock is ${describeValue(members.lock)}); a LockProvider needs ` +
        'lock(configuration) resolving to a lock with unlock() and extend(), or to undefined when the lock is held',
    );
  }
  for (const method of abilityMethods) {
    if (members[method] !== undefined && typeof members[method] !== 'function') {
      const got = describeValue(members[method]);
      throw new SchedulerLockConfigurationError(
        `${subject}: ${label}: ${method} must be a method or absent (got ${got})`,
      );
    }
  }
}

/**
 * What a provider call returned, awaited: `call` must return a promise (or another thenable). A value
 * handed back directly breaks the contract, which the caller reports instead of working by chance.
 */
export function awaitProviderCall<T>(result: Promise<T>, provider: string, method: string): Promise<T> {
  if (typeof (result as { then?: unknown } | null | undefined)?.then !== 'function') {
    return Promise.reject(contractError(provider, `${method} returned ${describeValue(result)}, not a promise`));
  }
  return result;
}

/**
 * `value` when it is a lock the executor can use, `undefined` for "held elsewhere" (`undefined` or
 * `null`); anything else is a {@link SchedulerLockConfigurationError} naming the provider and the member
 * that is missing. `source` says what produced the value, e.g. `lock()`.
 */
export function usableLock(value: unknown, provider: string, source: string): SimpleLock | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'object') {
    throw contractError(provider, `${source} resolved to ${describeValue(value)}, not a lock object or undefined`);
  }
  const lock = value as Record<string, unknown>;
  // Checked on every lock taken: the list of missing members is built only when one is missing.
  if (typeof lock.unlock !== 'function' || typeof lock.extend !== 'function') {
    const missing = ['unlock', 'extend'].filter((member) => typeof lock[member] !== 'function');
    const members = missing.map((member) => `${member}()`).join(' and ');
    throw contractError(provider, `${source} resolved to a lock without ${members}`);
  }
  if (lock.finish !== undefined && typeof lock.finish !== 'function') {
    const finish = describeValue(lock.finish);
    throw contractError(provider, `${source} resolved to a lock whose finish is ${finish}, not a method`);
  }
  return value as SimpleLock;
}

/**
 * What `lockOccurrence()` / `recoverOccurrence()` resolved to, checked: a claim object, with a usable lock
 * if it says it has one. Synchronous, for a `then` after {@link awaitProviderCall}: a claim is on every
 * tick's path, and each promise a tick holds while Redis answers is memory a node holds per job.
 */
export function checkedClaim<C extends object>(value: C, provider: string, source: string): C {
  if (typeof value !== 'object' || value === null) {
    throw contractError(provider, `${source} resolved to ${describeValue(value)}, not a claim object`);
  }
  if ('lock' in value && !usableLock(value.lock, provider, `${source}'s claim`)) {
    throw contractError(provider, `${source} resolved to a claim whose lock is ${describeValue(value.lock)}`);
  }
  return value;
}

function contractError(provider: string, what: string): SchedulerLockConfigurationError {
  return new SchedulerLockConfigurationError(`Lock provider ${provider}: ${what}; see LockProvider in the README`);
}

function describeValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object' && value !== null) return `a ${className(value) ?? 'plain object'}`;
  return String(value);
}

/** Throws, naming `subject` and the provider, if `configuration` needs lease renewal that `provider` lacks. */
export function assertCanRenewLeases(
  provider: LockProvider,
  configuration: RunLockConfiguration,
  subject: string,
): void {
  if (configuration.lease !== undefined && !canRenewLeases(provider)) {
    throw new SchedulerLockConfigurationError(
      `${subject}: keepAlive needs a provider with renewLeases(), which provider ` +
        `${describeProvider(provider)} does not have`,
    );
  }
}
