import type { DynamicModule, INestApplication, ModuleMetadata, Provider, Type } from '@nestjs/common';
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
import { CapturedLogger } from './captured-logger.js';

/** What {@link startSchedulerApp} builds the app from. */
export interface SchedulerAppSetup {
  /** `SchedulerLockModule.forRoot()` options, or a module built with `SchedulerLockModule.forRootAsync()`. */
  readonly lock: SchedulerLockModuleOptions | DynamicModule;
  readonly providers?: Provider[];
  readonly imports?: ModuleMetadata['imports'];
  /** HTTP controllers: the app then serves them on a free loopback port (Express), at {@link SchedulerApp.url}. */
  readonly controllers?: Type[];
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
  /** `http://127.0.0.1:<port>` when the app serves {@link SchedulerAppSetup.controllers}. */
  readonly url: string | undefined;
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
    controllers: setup.controllers ?? [],
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
  const http: INestApplication | undefined = setup.controllers && moduleRef.createNestApplication({ logger: logs });
  const app: SchedulerApp = {
    moduleRef,
    registry: moduleRef.get(SchedulerRegistry),
    logs,
    history$: history.asObservable(),
    events$: lockEvents.events$,
    recorded,
    url: undefined,
    get: (token) => moduleRef.get(token),
    close() {
      closing ??= (async () => {
        openApps.delete(app);
        try {
          await (http ?? moduleRef).close();
        } finally {
          recording.unsubscribe();
          history.complete();
        }
      })();
      return closing;
    },
  };
  openApps.add(app);
  if (!http) {
    await moduleRef.init();
    return app;
  }
  await http.listen(0, '127.0.0.1');
  return Object.assign(app, { url: (await http.getUrl()).replace('[::1]', '127.0.0.1') });
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
