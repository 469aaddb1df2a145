import { InMemoryLockProvider, LockedJobRegistry, SchedulerLockConfigurationError } from '../../lib/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';

/**
 * README, startup errors: "occurrence options on an interval or timeout job" fail with a
 * SchedulerLockConfigurationError. A declared runtime job's kind is known only when it is added, so the
 * same check belongs to `addInterval` / `addTimeout`: otherwise `onCrash: 'rerun'` or `catchUp` are
 * silently dropped.
 */
describe('a runtime job declared with occurrence options, then added as a timer', () => {
  afterEach(closeSchedulerApps);

  it.each([
    ['addInterval', setInterval, clearInterval],
    ['addTimeout', setTimeout, clearTimeout],
  ] as const)('is refused by %s, like the same options on a decorated timer job', async (method, start, stop) => {
    const app = await startSchedulerApp({
      lock: { provider: new InMemoryLockProvider(), defaultLockAtMostFor: '1m' },
    });
    app.get(LockedJobRegistry).declare('runtime-timer', { onCrash: 'rerun', catchUp: true });
    const timer = start(() => undefined, 60_000);
    try {
      expect(() => app.registry[method]('runtime-timer', timer)).toThrow(SchedulerLockConfigurationError);
    } finally {
      stop(timer);
    }
  });
});
