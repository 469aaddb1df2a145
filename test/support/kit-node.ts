import type { Provider } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import { Test, type TestingModule } from '@nestjs/testing';
import { SchedulerLockModule, type SchedulerLockModuleOptions } from '../../lib/index.js';
import { SchedulerLockTest, type TestLockProvider } from '../../lib/testing/index.js';
import { CapturedLogger } from './captured-logger.js';

/**
 * The app of the node `node` of a testing-kit cluster on `store`, compiled (not initialised): `providers` under
 * `SchedulerLockModule` with a one-minute `defaultLockAtMostFor` and `options`. Its log goes to `logger`.
 */
export function compileKitNode(
  store: TestLockProvider,
  node: string,
  providers: Provider[],
  options: Partial<SchedulerLockModuleOptions> = {},
  logger = new CapturedLogger(),
): Promise<TestingModule> {
  return SchedulerLockTest.override(
    Test.createTestingModule({
      imports: [
        ScheduleModule.forRoot(),
        SchedulerLockModule.forRoot({
          redis: 'redis://no-such-host.invalid:6379',
          defaultLockAtMostFor: '1m',
          ...options,
        }),
      ],
      providers,
    }).setLogger(logger),
    { store, node },
  ).compile();
}
