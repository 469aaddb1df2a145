import type { DynamicModule, ModuleMetadata, Provider, Type } from '@nestjs/common';
import { ScheduleModule, SchedulerRegistry } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { ReplaySubject, type Observable } from 'rxjs';
import {
  LockEvents,
  SchedulerLockConfigurationError,
  SchedulerLockModule,
  type LockEvent,
  type SchedulerLockModuleOptions,
} from '../../lib/index.js';
import type { Redis } from 'ioredis';
import { CapturedLogger } from './captured-logger.js';
import { deleteKeys, sharedRedis, uniquePrefix } from './shared-redis.js';

/** What {@link startSchedulerApp} builds the app from. */
export interface SchedulerAppSetup {
  /** `SchedulerLockModule.forRoot()` options, or a module built with `SchedulerLockModule.forRootAsync()`. */
  readonly lock: SchedulerLockModuleOptions | DynamicModule;
  readonly providers?: Provider[];
  readonly imports?: ModuleMetadata['imports'];
}

/** A started Nest app with `ScheduleModule` and `SchedulerLockModule`, and what it emitted and logged. */
export interface SchedulerApp {
  readonly moduleRef: TestingModule;
  readonly registry: SchedulerRegistry;
  /** Everything the app logged, through Nest's `Logger`. */
  readonly logs: CapturedLogger;
  /** Every lock event since startup, replayed to each subscriber: a job's first tick is never missed. */
  readonly history$: Observable<LockEvent>;
  /** Lock events from the moment of subscription on. */
  readonly events$: Observable<LockEvent>;
  /** Every lock event since startup, in order. */
  readonly recorded: readonly LockEvent[];
  get<T>(token: Type<T> | string | symbol): T;
  /** Closes the app (stops its jobs); later calls do nothing. */
  close(): Promise<void>;
}

const openApps = new Set<SchedulerApp>();

/**
 * Compiles and initialises an app, its jobs scheduled by `ScheduleModule.forRoot()`. Lock events are
 * recorded from before the first tick. Rejects with the startup error, if any; the half-started app is
 * still closed by {@link closeSchedulerApps}.
 */
export async function startSchedulerApp(setup: SchedulerAppSetup): Promise<SchedulerApp> {
  const logs = new CapturedLogger();
  const lockModule = 'module' in setup.lock ? setup.lock : SchedulerLockModule.forRoot(setup.lock);
  const moduleRef = await Test.createTestingModule({
    imports: [ScheduleModule.forRoot(), lockModule, ...(setup.imports ?? [])],
    providers: setup.providers ?? [],
  })
    .setLogger(logs)
    .compile();

  const lockEvents = moduleRef.get(LockEvents);
  const recorded: LockEvent[] = [];
  const history = new ReplaySubject<LockEvent>();
  const recording = lockEvents.events$.subscribe((event) => {
    recorded.push(event);
    history.next(event);
  });
  let closing: Promise<void> | undefined;
  const app: SchedulerApp = {
    moduleRef,
    registry: moduleRef.get(SchedulerRegistry),
    logs,
    history$: history.asObservable(),
    events$: lockEvents.events$,
    recorded,
    get: (token) => moduleRef.get(token),
    close() {
      closing ??= (async () => {
        openApps.delete(app);
        try {
          await moduleRef.close();
        } finally {
          recording.unsubscribe();
          history.complete();
        }
      })();
      return closing;
    },
  };
  openApps.add(app);
  await moduleRef.init();
  return app;
}

/** Starts an app that must not start; resolves to why it did not, checked to be a SchedulerLockConfigurationError. */
export async function startupError(setup: SchedulerAppSetup): Promise<Error> {
  const error = await startSchedulerApp(setup).then(
    () => new Error('the app started'),
    (rejection: unknown) => rejection as Error,
  );
  expect(error).toBeInstanceOf(SchedulerLockConfigurationError);
  return error;
}

/** Closes every app {@link startSchedulerApp} opened and that is still open; for `afterEach`. */
export async function closeSchedulerApps(): Promise<void> {
  await Promise.all([...openApps].map((app) => app.close()));
}

/** What {@link sharedRedisPerTest} gives a spec file: set in its hooks, so read inside tests only. */
export interface SharedRedisPerTest {
  /** One client to the shared Redis for the whole file. */
  readonly redis: Redis;
  /** A fresh key prefix for each test. */
  readonly keyPrefix: string;
}

/**
 * Registers the hooks of a spec file whose apps lock in the shared Redis: a client for the file, a key
 * prefix per test, and after each test its apps closed and its keys deleted.
 */
export function sharedRedisPerTest(label: string): SharedRedisPerTest {
  const state = {} as { redis: Redis; keyPrefix: string };
  beforeAll(() => {
    state.redis = sharedRedis();
  });
  beforeEach(() => {
    state.keyPrefix = uniquePrefix(label);
  });
  afterEach(async () => {
    await closeSchedulerApps();
    await deleteKeys(state.redis, state.keyPrefix);
  });
  afterAll(() => state.redis.quit());
  return state;
}
