import { InMemoryLockProvider } from '../../lib/index.js';
import { closeSchedulerApps, startSchedulerApp } from '../support/scheduler-app.js';
import { deferred } from '../support/wait-until.js';

/**
 * A heartbeat still waiting on the store when the app closes sends nothing more. The app may end the store's
 * connections as soon as it has closed (a PostgreSQL pool in `onApplicationShutdown`): a later call fails.
 */

afterEach(() => closeSchedulerApps());

/** An in-memory operator store whose first `publish` waits for {@link answer}, and which counts later calls. */
class SlowFirstPublish extends InMemoryLockProvider {
  readonly published = deferred();
  private readonly answered = deferred();
  private answeredYet = false;
  callsAfterAnswer = 0;

  answer(): void {
    this.answeredYet = true;
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
          if (key === 'publish' && first) {
            first = false;
            this.published.resolve();
            await this.answered.promise;
          } else if (this.answeredYet) this.callsAfterAnswer += 1;
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}

it('makes no store call after the app closed, and logs no error, when a heartbeat was waiting on the store', async () => {
  const provider = new SlowFirstPublish({ node: 'node-a' });
  const app = await startSchedulerApp({ lock: { provider, defaultLockAtMostFor: '1m', heartbeatInterval: '1h' } });
  await provider.published.promise;

  await app.close();
  provider.answer();
  // The heartbeat's next calls, had it made them, would have run on these turns of the event loop.
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));

  expect(provider.callsAfterAnswer).toBe(0);
  expect(app.logs.texts('error')).toEqual([]);
});
