import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { InMemoryLockProvider, SchedulerLock } from '../../lib/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { deferred } from '../support/wait-until.js';

/**
 * A health check still waiting on the store when the app closes ends before the close does. The app may end the
 * store's connections as soon as it has closed (a PostgreSQL pool in `onApplicationShutdown`): a later call fails.
 */

const HOUR = 3_600_000;

@Injectable()
class YearlyJob {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('0 0 1 1 *', { name: 'yearly' })
  run() {}
}

/** An in-memory store whose first `jobs()` (a health check's first call) waits for {@link answer}. */
class SlowFirstListing extends InMemoryLockProvider {
  readonly listing = deferred();
  private readonly answered = deferred();
  /** Set once the app "ended its pool": every later call fails, as `pg` does. */
  ended = false;
  callsAfterEnd = 0;

  answer(): void {
    this.answered.resolve();
  }

  override operatorProvider(): ReturnType<InMemoryLockProvider['operatorProvider']> {
    const store = super.operatorProvider();
    let first = true;
    return new Proxy(store, {
      get: (target, key, receiver) => {
        const value: unknown = Reflect.get(target, key, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          if (this.ended) {
            this.callsAfterEnd += 1;
            throw new Error('Cannot use a pool after calling end on the pool');
          }
          if (key === 'jobs' && first) {
            first = false;
            this.listing.resolve();
            await this.answered.promise;
          }
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}

afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
});

it('lets a health check under way end before the app has closed, so it logs no error', async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  const provider = new SlowFirstListing({ node: 'node-a' });
  const app = await startSchedulerApp({
    lock: { provider, defaultLockAtMostFor: '1m', heartbeatInterval: '1h' },
    providers: [YearlyJob],
  });
  await jest.advanceTimersByTimeAsync(HOUR);
  await provider.listing.promise;

  let closed = false;
  const closing = app.close().then(() => (closed = provider.ended = true));
  // Had the close not waited for the check, it would have ended within these turns of the event loop.
  for (let turn = 0; turn < 200 && !closed; turn += 1) await new Promise((resolve) => setImmediate(resolve));
  expect(closed).toBe(false);
  provider.answer();
  await closing;

  expect(provider.callsAfterEnd).toBe(0);
  expect(app.logs.texts('error')).toEqual([]);
});
