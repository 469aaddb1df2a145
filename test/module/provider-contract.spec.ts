import { Injectable, type Type } from '@nestjs/common';
import { Cron, Timeout } from '@nestjs/schedule';
import {
  currentLock,
  LockingTaskExecutor,
  SchedulerLock,
  SchedulerLockConfigurationError,
  type SchedulerLockOptions,
  InMemoryLockProvider,
} from '../../lib/index.js';
import type { LockConfiguration, LockProvider, SimpleLock } from '../../lib/provider/index.js';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { closeSchedulerApps, startSchedulerApp, startupError, type SchedulerApp } from '../support/scheduler-app.js';

afterEach(() => closeSchedulerApps());

/** A provider with lock() alone: none of the optional abilities. */
class MinimalLockProvider implements LockProvider {
  private readonly inner = new InMemoryLockProvider();

  lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    return this.inner.lock(configuration);
  }
}

/** Real locks in memory, handed out as `present` makes them: the way a broken provider would. */
abstract class StoreBackedProvider implements LockProvider {
  private readonly inner = new MinimalLockProvider();

  async lock(configuration: LockConfiguration): Promise<SimpleLock | undefined> {
    const lock = await this.inner.lock(configuration);
    return lock && (this.present(lock) as SimpleLock);
  }

  protected abstract present(lock: SimpleLock): unknown;
}

class LockWithoutExtendProvider extends StoreBackedProvider {
  protected present(lock: SimpleLock) {
    return { unlock: () => lock.unlock() };
  }
}

class LockWithoutUnlockProvider extends StoreBackedProvider {
  protected present(lock: SimpleLock) {
    return { extend: (atMost: number, atLeast: number) => lock.extend(atMost, atLeast) };
  }
}

class EmptyLockProvider extends StoreBackedProvider {
  protected present() {
    return {};
  }
}

class TrueLockProvider extends StoreBackedProvider {
  protected present() {
    return true;
  }
}

/** Answers without a promise, as a provider over a synchronous store might. */
class SynchronousLockProvider implements LockProvider {
  lock(): Promise<SimpleLock | undefined> {
    const lock = { unlock: async () => undefined, extend: async () => undefined };
    return lock as unknown as Promise<SimpleLock>;
  }
}

/** Its locks' extend() resolves to an object that is no lock. */
class BrokenExtendProvider extends StoreBackedProvider {
  protected present(lock: SimpleLock) {
    return { unlock: () => lock.unlock(), extend: async () => ({ extended: true }) };
  }
}

const WARM_UP = 'WarmUpJob.run';

@Injectable()
class WarmUpJob {
  runs = 0;

  @SchedulerLock()
  @Timeout(0)
  run() {
    this.runs += 1;
  }
}

/** What the startup error says about a provider without lock(). */
const NEEDS_LOCK =
  'a LockProvider needs lock(configuration) resolving to a lock with unlock() and extend(), or to undefined ' +
  'when the lock is held';

/** Why an app locking `jobs` with `provider` does not start. */
function providerError(provider: unknown, jobs: Type[] = []): Promise<Error> {
  return startupError({ lock: { provider: provider as LockProvider, defaultLockAtMostFor: '1m' }, providers: jobs });
}

function cronJobLockedWith(options: SchedulerLockOptions): Type {
  @Injectable()
  class ReportJob {
    @SchedulerLock(options)
    @Cron('0 0 * * * *')
    run() {}
  }
  return ReportJob;
}

describe('a provider that cannot do what the configuration needs fails the startup, naming it and the member', () => {
  it.each<[string, unknown, string]>([
    [
      'a plain object without lock()',
      {},
      `SchedulerLockModule options: provider (a plain object) has no lock() method (lock is undefined); ${NEEDS_LOCK}`,
    ],
    [
      'a class without lock()',
      new (class RedisClientByMistake {})(),
      'SchedulerLockModule options: provider RedisClientByMistake has no lock() method (lock is undefined); ' +
        NEEDS_LOCK,
    ],
    [
      'a lock that is not a method',
      { lock: 'redis://localhost' },
      'SchedulerLockModule options: provider (a plain object) has no lock() method (lock is "redis://localhost"); ' +
        NEEDS_LOCK,
    ],
    [
      'an optional capability that is not a method',
      { lock: async () => undefined, renewLeases: true },
      'SchedulerLockModule options: provider (a plain object): renewLeases must be a method or absent (got true)',
    ],
    ['no provider object', 42, 'SchedulerLockModule options: provider must be a LockProvider object (got 42)'],
  ])('%s', async (_, provider, message) => {
    expect((await providerError(provider)).message).toBe(message);
  });

  it('keepAlive without renewLeases()', async () => {
    const minimal = new MinimalLockProvider();
    const { message } = await providerError(minimal, [cronJobLockedWith({ keepAlive: true })]);

    expect(message).toBe(
      'ReportJob.run: keepAlive needs a provider with renewLeases(), which provider MinimalLockProvider ' +
        'does not have',
    );
  });

  it.each<[string, SchedulerLockOptions, string]>([
    ['a cron job (once per occurrence by default)', {}, 'lockOccurrence()'],
    ["a cron job with onCrash: 'rerun'", { onCrash: 'rerun' }, 'lockOccurrence() and recoverOccurrence()'],
  ])('%s without the occurrence methods', async (_, options, methods) => {
    const minimal = new MinimalLockProvider();
    const { message } = await providerError(minimal, [cronJobLockedWith(options)]);

    expect(message).toBe(
      `ReportJob.run: once-per-occurrence locking needs a provider with ${methods}, which provider ` +
        'MinimalLockProvider does not have; set occurrence: false',
    );
  });
});

describe('a provider whose lock() returns something unusable', () => {
  /** Starts {@link WarmUpJob} on `provider` and waits for the outcome of its only tick. */
  async function firstTick(provider: LockProvider): Promise<{ app: SchedulerApp; skipped: LockEventOf<'skipped'> }> {
    const app = await startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '1m' }, providers: [WarmUpJob] });
    const skipped = await nextEvent(app.history$, jobEvent('skipped', WARM_UP));
    return { app, skipped };
  }

  it.each<[string, new () => LockProvider, string]>([
    ['a lock without extend()', LockWithoutExtendProvider, 'lock() resolved to a lock without extend()'],
    ['a lock without unlock()', LockWithoutUnlockProvider, 'lock() resolved to a lock without unlock()'],
    ['an empty object', EmptyLockProvider, 'lock() resolved to a lock without unlock() and extend()'],
    ['a value that is not an object', TrueLockProvider, 'lock() resolved to true, not a lock object or undefined'],
    ['a lock instead of a promise', SynchronousLockProvider, 'lock() returned a plain object, not a promise'],
  ])(
    'skips a @Timeout job with a logged SchedulerLockConfigurationError naming the provider and the member (%s)',
    async (_, Provider, what) => {
      const provider = new Provider();
      const { app, skipped } = await firstTick(provider);
      const providerName = provider.constructor.name;

      expect(skipped.reason).toBe('provider-error');
      expect(skipped.error).toBeInstanceOf(SchedulerLockConfigurationError);
      expect(app.logs.texts('error', 'SchedulerLock')).toEqual([
        `Could not take lock "${WARM_UP}" (job "${WARM_UP}"), skipping this run: Lock provider ${providerName}: ` +
          `${what}; see LockProvider in the README`,
      ]);
      expect(app.get(WarmUpJob).runs).toBe(0);
      expect(app.logs.entries.filter(({ message }) => message instanceof TypeError)).toEqual([]);
    },
  );

  it('resolves executeWithLock to a provider-error skip carrying the error, and never runs the task', async () => {
    const provider = new LockWithoutExtendProvider();
    const app = await startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '1m' } });
    let ran = false;

    const outcome = await app.get(LockingTaskExecutor).executeWithLock(() => (ran = true), { name: 'export' });

    const error = expect.any(SchedulerLockConfigurationError);
    expect(outcome).toEqual({ executed: false, reason: 'provider-error', error });
    const message =
      'Lock provider LockWithoutExtendProvider: lock() resolved to a lock without extend(); ' +
      'see LockProvider in the README';
    expect(outcome).toMatchObject({ error: { message } });
    expect(ran).toBe(false);
  });

  it("rejects the run's extend() naming the provider when a lock's extend() resolves to no lock", async () => {
    const provider = new BrokenExtendProvider();
    const app = await startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '1m' } });
    const extendInRun = () =>
      currentLock()!
        .extend('5m')
        .then(
          () => 'extended',
          (error: Error) => error,
        );

    const outcome = await app.get(LockingTaskExecutor).executeWithLock(extendInRun, { name: 'export' });

    expect(outcome).toEqual({ executed: true, result: expect.any(SchedulerLockConfigurationError) });
    expect(outcome.executed && (outcome.result as Error).message).toBe(
      "Lock provider BrokenExtendProvider: a lock's extend() resolved to a lock without unlock() and extend(); " +
        'see LockProvider in the README',
    );
  });
});
