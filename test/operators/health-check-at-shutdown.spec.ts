import { jest } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import { SchedulerLock } from '../../lib/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { SlowFirstCall } from '../support/slow-first-call.js';

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

afterEach(async () => {
  await closeSchedulerApps();
  jest.useRealTimers();
});

it('lets a health check under way end before the app has closed, so it logs no error', async () => {
  jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
  // A health check's only read is clusterReading().
  const provider = new SlowFirstCall('clusterReading', { node: 'node-a' });
  const app = await startSchedulerApp({
    lock: { provider, defaultLockAtMostFor: '1m', heartbeatInterval: '1h' },
    providers: [YearlyJob],
  });
  await jest.advanceTimersByTimeAsync(HOUR);
  await provider.reached.promise;

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
