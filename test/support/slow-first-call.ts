import { InMemoryLockProvider } from '../../lib/index.js';
import type { InMemoryLockProviderOptions } from '../../lib/providers/in-memory/in-memory-lock-provider.js';
import { deferred } from './wait-until.js';

/**
 * An in-memory provider whose operator provider holds the first call of `method` until {@link answer}. Once
 * {@link ended} is set, as when an app ends its `pg` pool at shutdown, every call fails and is counted.
 */
export class SlowFirstCall extends InMemoryLockProvider {
  /** Resolves once the first call of `method` waits. */
  readonly reached = deferred();
  private readonly answered = deferred();
  ended = false;
  callsAfterEnd = 0;

  constructor(
    private readonly method: string,
    options: InMemoryLockProviderOptions,
  ) {
    super(options);
  }

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
          if (key === this.method && first) {
            first = false;
            this.reached.resolve();
            await this.answered.promise;
          }
          return (value as (...args: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }
}
