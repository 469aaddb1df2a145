import { jest } from '@jest/globals';
import type { INestApplication } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { SchedulerLockModule } from '../../lib/index.js';
import { SchedulerLockDashboardModule, type SchedulerLockDashboardOptions } from '../../lib/dashboard/index.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { adapterOf, ReportJob, type Platform } from './dashboard-app.js';

/** A started app with the status page on an in-memory store, for tests on a fake clock. */
export interface FakeTimeDashboardApp {
  readonly app: INestApplication;
  /** The page's URL, e.g. `http://127.0.0.1:40123/scheduler-lock`. */
  readonly pageUrl: string;
  readonly logs: CapturedLogger;
}

/** How {@link startFakeTimeDashboardApp} starts the app. */
export interface FakeTimeDashboardAppOptions {
  readonly platform: Platform;
  /** The app's own `enableCors(cors)`, when given. */
  readonly cors?: Parameters<INestApplication['enableCors']>[0];
  /** Runs after the modules are built and before `listen()`: what an app's `bootstrap()` does there. */
  readonly beforeListen?: () => void;
}

/**
 * Starts a Nest app on a free port of 127.0.0.1 with {@link ReportJob} on a {@link TestLockProvider} (no server,
 * no real timer: call it under Jest's fake timers) and the status page with `dashboard`.
 */
export async function startFakeTimeDashboardApp<TRequest>(
  dashboard: SchedulerLockDashboardOptions<TRequest>,
  { platform, cors, beforeListen }: FakeTimeDashboardAppOptions,
): Promise<FakeTimeDashboardApp> {
  const logs = new CapturedLogger();
  const store = new TestLockProvider();
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      SchedulerLockModule.forRoot({ provider: store.provider('page-node'), defaultLockAtMostFor: '1m' }),
      SchedulerLockDashboardModule.forRoot(dashboard),
    ],
    providers: [ReportJob],
  })
    .setLogger(logs)
    .compile();
  const app = moduleRef.createNestApplication(adapterOf(platform), { logger: logs });
  if (cors) app.enableCors(cors);
  beforeListen?.();
  try {
    await app.listen(0, '127.0.0.1');
  } catch (error) {
    await app.close();
    throw error;
  }
  return { app, pageUrl: (await app.getUrl()) + (dashboard.path ?? '/scheduler-lock'), logs };
}

/**
 * Registers the fake clock for each test of a spec, and the real one after it. Fastify's startup hangs on a
 * faked `queueMicrotask`, so the microtask queues stay real.
 */
export function fakeClockForEachTest(): void {
  beforeEach(() =>
    jest.useFakeTimers({
      now: new Date('2027-03-01T09:00:00Z'),
      doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
    }),
  );
  afterEach(() => jest.useRealTimers());
}
