import { jest } from '@jest/globals';
import { Logger } from '@nestjs/common';
import {
  InMemoryLockProvider,
  LockAssert,
  LockEvents,
  LockingTaskExecutor,
  SchedulerLockConfigurationError,
  currentLock,
  type LockEvent,
  type TaskResult,
} from '../../lib/index.js';
import { isLocked, lockConfig, mustLock, uniqueLockName } from '../../lib/provider-tests/lock-probes.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { events, nextEvent } from '../support/lock-events.js';
import {
  FailingReleaseLockProvider,
  RecordingLockProvider,
  SlowReleaseLockProvider,
  UnreachableLockProvider,
} from '../support/lock-provider-doubles.js';
import { deferred } from '../support/wait-until.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import type { LockProvider } from '../../lib/provider/index.js';
import type { ExecuteWithLockOptions } from '../../lib/core/executor/executor-settings.js';

const LOCKED_BY = 'node-a';

/** An executor on `provider` logging through Nest's `Logger` (as the module's does), with the stream of its events. */
function executorOn(provider: LockProvider) {
  const lockEvents = new LockEvents();
  const logger = new Logger('SchedulerLock');
  const executor = new LockingTaskExecutor(provider, { node: LOCKED_BY, events: lockEvents, logger });
  return { executor, events$: lockEvents.events$ };
}

/** A matcher for the events of one type and lock name. */
function eventOf<T extends LockEvent['type']>(type: T, lockName: string) {
  return (event: LockEvent): event is Extract<LockEvent, { type: T }> =>
    event.type === type && event.lockName === lockName;
}

/** The types of the next `count` events of `lockName`, collected while `act` runs. */
async function eventTypesDuring(
  events$: LockEvents['events$'],
  lockName: string,
  count: number,
  act: () => Promise<unknown>,
) {
  const collected = events(events$, (event) => event.lockName === lockName, count);
  await act();
  return (await collected).map((event) => event.type);
}

/** Runs `act`, failing the test if it throws synchronously instead of returning a (possibly rejected) promise. */
function callWithoutSyncThrow<T>(act: () => Promise<T>): Promise<T> {
  let returned: Promise<T> | undefined;
  expect(() => (returned = act())).not.toThrow();
  return returned!;
}

/** Awaits a few turns of different kinds, so code after it runs deep in a chain of async continuations. */
async function deepAsync<T>(depth: number, then: () => T): Promise<T> {
  if (depth === 0) return then();
  await new Promise((resolve) => (depth % 2 ? setTimeout(resolve, 0) : setImmediate(resolve)));
  const [value] = await Promise.all([deepAsync(depth - 1, then)]);
  return value;
}

const TASK_RESULT = { rows: 3 };
const TASK_FAILURE = new Error('report failed');

/** A task that succeeds and one that fails, each with the check that the caller got exactly its outcome. */
const TASK_OUTCOMES = [
  {
    kind: 'result',
    task: async () => TASK_RESULT,
    expectKept: (outcome: Promise<TaskResult<unknown>>) =>
      expect(outcome).resolves.toEqual({ executed: true, result: TASK_RESULT }),
  },
  {
    kind: 'error',
    task: async () => Promise.reject(TASK_FAILURE),
    expectKept: (outcome: Promise<TaskResult<unknown>>) => expect(outcome).rejects.toBe(TASK_FAILURE),
  },
];

let logger: CapturedLogger;

beforeEach(() => {
  logger = new CapturedLogger();
  Logger.overrideLogger(logger);
});

afterEach(() => jest.useRealTimers());

afterAll(() => Logger.overrideLogger(new Logger()));

describe('LockingTaskExecutor', () => {
  let store: InMemoryLockProvider;

  beforeEach(() => {
    store = new InMemoryLockProvider();
  });

  it('runs the task while holding the lock, returns { executed: true, result } and releases the lock', async () => {
    const { executor } = executorOn(store);
    const name = uniqueLockName();
    const result = { report: 'done' };
    let heldDuringTask: boolean | undefined;

    const outcome = await executor.executeWithLock(
      async () => {
        heldDuringTask = await isLocked(store, name);
        return result;
      },
      { name },
    );

    expect(heldDuringTask).toBe(true);
    expect(outcome).toEqual({ executed: true, result });
    expect((outcome as { result: unknown }).result).toBe(result);
    expect(await isLocked(store, name)).toBe(false);
  });

  it("skips with { executed: false, reason: 'locked' } and does not call the task when the lock is held elsewhere", async () => {
    const { executor } = executorOn(store);
    const name = uniqueLockName();
    const elsewhere = await mustLock(store, lockConfig(name));
    const task = jest.fn(() => 'ran');

    await expect(executor.executeWithLock(task, { name })).resolves.toEqual({ executed: false, reason: 'locked' });
    expect(task).not.toHaveBeenCalled();
    await elsewhere.unlock();
  });

  it('is reentrant per async context and name: a nested call runs without asking the provider again', async () => {
    const provider = new RecordingLockProvider(store);
    const { executor } = executorOn(provider);
    const [name, otherName] = [uniqueLockName(), uniqueLockName()];

    const outcome = await executor.executeWithLock(
      async () => {
        const nested = await deepAsync(3, () => executor.executeWithLock(() => 'inner', { name }));
        const nestedOtherName = await executor.executeWithLock(() => 'other', { name: otherName });
        return { nested, nestedOtherName };
      },
      { name },
    );

    expect(outcome).toEqual({
      executed: true,
      result: { nested: { executed: true, result: 'inner' }, nestedOtherName: { executed: true, result: 'other' } },
    });
    expect(provider.requests.map((request) => request.name)).toEqual([name, otherName]);
  });

  it('does not run two independent, concurrent calls of the same name', async () => {
    const { executor, events$ } = executorOn(store);
    const name = uniqueLockName();
    const release = deferred();
    const task = jest.fn(() => release.promise.then(() => 'ran'));
    const skipped = nextEvent(events$, eventOf('skipped', name));

    const both = Promise.all([executor.executeWithLock(task, { name }), executor.executeWithLock(task, { name })]);
    await skipped;
    release.resolve();

    const outcomes = await both;
    expect(task).toHaveBeenCalledTimes(1);
    expect(outcomes).toEqual(
      expect.arrayContaining([
        { executed: true, result: 'ran' },
        { executed: false, reason: 'locked' },
      ]),
    );
  });

  it('does not treat a callback that outlives its run as holding the lock: after the release it must take the lock again', async () => {
    const { executor } = executorOn(store);
    const name = uniqueLockName();
    const later = deferred();
    const lateTask = jest.fn(() => 'ran without the lock');
    let lateOutcome!: Promise<TaskResult<string>>;

    // The run leaves a continuation behind (a timer, a listener, a promise callback), as real code does.
    await executor.executeWithLock(
      () => {
        lateOutcome = later.promise.then(() => executor.executeWithLock(lateTask, { name }));
      },
      { name },
    );
    const elsewhere = await mustLock(store, lockConfig(name));
    later.resolve();

    await expect(lateOutcome).resolves.toEqual({ executed: false, reason: 'locked' });
    expect(lateTask).not.toHaveBeenCalled();
    await elsewhere.unlock();
  });

  it('LockAssert.assertLocked throws outside a run and passes inside, however deep the async calls go', async () => {
    const { executor } = executorOn(store);
    expect(() => LockAssert.assertLocked()).toThrow(/not running under a scheduler lock/);

    const outcome = await executor.executeWithLock(
      async () => {
        LockAssert.assertLocked();
        await deepAsync(6, () => LockAssert.assertLocked());
        return 'asserted';
      },
      { name: uniqueLockName() },
    );

    expect(outcome).toEqual({ executed: true, result: 'asserted' });
    expect(() => LockAssert.assertLocked()).toThrow(/not running under a scheduler lock/);
  });

  it("currentLock() exposes the run's name, fencing token and node inside, the innermost lock when nested, and nothing outside", async () => {
    const provider = new RecordingLockProvider(store);
    const { executor } = executorOn(provider);
    const [outer, inner] = [uniqueLockName('outer'), uniqueLockName('inner')];
    const seen: { name?: string; fencingToken?: number | null; node?: string }[] = [];
    const look = () => {
      const lock = currentLock();
      seen.push({ name: lock?.name, fencingToken: lock?.fencingToken, node: lock?.node });
    };

    expect(currentLock()).toBeUndefined();
    await executor.executeWithLock(
      async () => {
        look();
        await executor.executeWithLock(() => deepAsync(2, look), { name: inner });
        look();
      },
      { name: outer },
    );
    expect(currentLock()).toBeUndefined();

    const [outerLock, innerLock] = provider.locks;
    expect(seen).toEqual([
      { name: outer, fencingToken: outerLock.fencingToken, node: LOCKED_BY },
      { name: inner, fencingToken: innerLock.fencingToken, node: LOCKED_BY },
      { name: outer, fencingToken: outerLock.fencingToken, node: LOCKED_BY },
    ]);
    expect(outerLock.fencingToken).toEqual(expect.any(Number));
  });

  it.each([
    ['an async task', (failure: Error) => async () => Promise.reject(failure)],
    [
      'a task that throws synchronously',
      (failure: Error) => () => {
        throw failure;
      },
    ],
  ])('propagates the error of %s unchanged, only after the lock was released', async (_kind, failingTask) => {
    const { executor, events$ } = executorOn(new SlowReleaseLockProvider(store));
    const name = uniqueLockName();
    const failure = new Error('report generation failed');
    const order: string[] = [];
    const subscription = events$.subscribe((event) => event.lockName === name && order.push(event.type));

    const rejection = await executor.executeWithLock(failingTask(failure), { name }).then(
      () => undefined,
      (error: unknown) => error,
    );
    order.push('rejected');
    subscription.unsubscribe();

    expect(rejection).toBe(failure);
    expect(order.slice(-3)).toEqual(['finished', 'released', 'rejected']);
    expect(await isLocked(store, name)).toBe(false);
  });

  it('keeps the lock for lockAtLeastFor after a failing task too, and frees it then', async () => {
    jest.useFakeTimers();
    const { executor } = executorOn(store);
    const name = uniqueLockName();
    const lockAtLeastFor = 200;
    const failure = new Error('boom');

    await expect(executor.executeWithLock(() => Promise.reject(failure), { name, lockAtLeastFor })).rejects.toBe(
      failure,
    );
    expect(await isLocked(store, name)).toBe(true);
    await jest.advanceTimersByTimeAsync(lockAtLeastFor - 1);
    expect(await isLocked(store, name)).toBe(true);
    await jest.advanceTimersByTimeAsync(1);
    expect(await isLocked(store, name)).toBe(false);
  });

  it.each(TASK_OUTCOMES)(
    "keeps the task's $kind when the release fails, and emits release-failed (provider-error)",
    async ({ task, expectKept }) => {
      const releaseError = new Error('connection lost during release');
      const { executor, events$ } = executorOn(new FailingReleaseLockProvider(store, releaseError));
      const name = uniqueLockName();
      const releaseFailed = nextEvent(events$, eventOf('release-failed', name));

      await expectKept(executor.executeWithLock(task, { name }));
      expect(await releaseFailed).toMatchObject({ reason: 'provider-error', error: releaseError });
    },
  );

  it("skips with { executed: false, reason: 'provider-error' } when the provider rejects: no throw, task not called, one error line per burst", async () => {
    const storeDown = new Error('ECONNREFUSED 127.0.0.1:6390');
    const provider = new UnreachableLockProvider(storeDown);
    const { executor, events$ } = executorOn(provider);
    const name = uniqueLockName();
    const task = jest.fn(() => 'ran');
    const skips = events(events$, eventOf('skipped', name), 10);

    const outcomes: TaskResult<string>[] = [];
    for (let call = 0; call < 10; call += 1) outcomes.push(await executor.executeWithLock(task, { name }));

    expect(provider.attempts).toBe(10);
    expect(outcomes).toEqual(Array(10).fill({ executed: false, reason: 'provider-error', error: storeDown }));
    expect(task).not.toHaveBeenCalled();
    expect((await skips).map((event) => (event as { reason: string }).reason)).toEqual(
      Array(10).fill('provider-error'),
    );
    const errorLines = logger.texts('error', 'SchedulerLock');
    expect(errorLines).toHaveLength(1);
    expect(errorLines[0]).toContain(name);
    expect(errorLines[0]).toContain(storeDown.message);
  });

  it('emits attempt, acquired, started, finished, released for a run, and attempt, skipped (with the reason) for a skip', async () => {
    const { executor, events$ } = executorOn(store);
    const name = uniqueLockName();

    const run = await eventTypesDuring(events$, name, 5, () => executor.executeWithLock(() => 'ran', { name }));
    expect(run).toEqual(['attempt', 'acquired', 'started', 'finished', 'released']);

    const elsewhere = await mustLock(store, lockConfig(name));
    const skip = events(events$, (event) => event.lockName === name, 2);
    await executor.executeWithLock(() => 'ran', { name });
    expect(await skip).toEqual([
      expect.objectContaining({ type: 'attempt', lockName: name, node: LOCKED_BY }),
      expect.objectContaining({ type: 'skipped', reason: 'locked', lockName: name, node: LOCKED_BY }),
    ]);
    await elsewhere.unlock();
  });

  it.each<[string, Partial<ExecuteWithLockOptions>, string[]]>([
    ['an empty name', { name: '' }, ['""']],
    ['a blank name', { name: '   ' }, ['"   "']],
    ['an unparsable lockAtMostFor', { lockAtMostFor: 'ten minutes' as never }, ['lockAtMostFor', '"ten minutes"']],
    ['a negative lockAtLeastFor', { lockAtLeastFor: -5 }, ['lockAtLeastFor', '-5']],
    ['lockAtLeastFor > lockAtMostFor', { lockAtMostFor: 1_000, lockAtLeastFor: 5_000 }, ['5000', '1000']],
  ])(
    'rejects %s with SchedulerLockConfigurationError quoting the value, without locking',
    async (_case, options, quoted) => {
      const provider = new RecordingLockProvider(store);
      const { executor } = executorOn(provider);
      const task = jest.fn();

      const failure = await callWithoutSyncThrow(() =>
        executor.executeWithLock(task, { name: uniqueLockName(), ...options }),
      ).then(
        () => undefined,
        (error: unknown) => error,
      );

      expect(failure).toBeInstanceOf(SchedulerLockConfigurationError);
      for (const text of quoted) expect((failure as Error).message).toContain(text);
      expect(provider.requests).toHaveLength(0);
      expect(task).not.toHaveBeenCalled();
    },
  );
});

describe('LockingTaskExecutor with other nodes on the same store', () => {
  const shared = new TestLockProvider();
  const provider = shared.provider(LOCKED_BY);

  afterEach(() => shared.reset());

  it('skips a run while another node, with its own provider, holds the lock', async () => {
    const { executor } = executorOn(provider);
    const name = uniqueLockName();
    const elsewhere = await mustLock(shared.provider('node-b'), lockConfig(name));
    const task = jest.fn();

    await expect(executor.executeWithLock(task, { name })).resolves.toEqual({ executed: false, reason: 'locked' });
    expect(task).not.toHaveBeenCalled();
    await elsewhere.unlock();
  });

  it("has freed the lock for other nodes by the time the task's error reaches the caller", async () => {
    const { executor } = executorOn(provider);
    const other = shared.provider('node-b');
    const name = uniqueLockName();
    const failure = new Error('boom');
    let heldDuringTask: boolean | undefined;

    const rejection = executor.executeWithLock(
      async () => {
        heldDuringTask = await isLocked(other, name);
        throw failure;
      },
      { name },
    );

    await expect(rejection).rejects.toBe(failure);
    expect(heldDuringTask).toBe(true);
    expect(await isLocked(other, name)).toBe(false);
  });

  it.each(TASK_OUTCOMES)(
    "keeps the task's $kind when its lock was removed by hand during the run, and emits release-failed (expired)",
    async ({ task, expectKept }) => {
      const { executor, events$ } = executorOn(provider);
      const name = uniqueLockName();
      const releaseFailed = nextEvent(events$, eventOf('release-failed', name));

      await expectKept(
        executor.executeWithLock(
          async () => {
            shared.expire(name);
            return task();
          },
          { name },
        ),
      );
      expect(await releaseFailed).toMatchObject({ reason: 'expired', lockName: name });
    },
  );
});
