import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { SlowFirstCall } from '../support/slow-first-call.js';

/**
 * A heartbeat still waiting on the store when the app closes sends nothing more. The app may end the store's
 * connections as soon as it has closed (a PostgreSQL pool in `onApplicationShutdown`): a later call fails.
 */

afterEach(() => closeSchedulerApps());

it('makes no store call after the app closed, and logs no error, when a heartbeat was waiting on the store', async () => {
  const provider = new SlowFirstCall('publish', { node: 'node-a' });
  const app = await startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '1m', heartbeatInterval: '1h' } });
  await provider.reached.promise;

  await app.close();
  provider.ended = true;
  provider.answer();
  // The heartbeat's next calls, had it made them, would have run on these turns of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));

  expect(provider.callsAfterEnd).toBe(0);
  expect(app.logs.texts('error')).toEqual([]);
});
