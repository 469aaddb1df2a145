import { Controller, Inject, Logger, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { DashboardAccessGuard, DASHBOARD_SETTINGS } from './dashboard-access.guard.js';
import {
  assertNotProduction,
  createDashboardSettings,
  type DashboardSettings,
  type SchedulerLockDashboardOptions,
} from './dashboard-options.js';
import { DashboardController } from './dashboard.controller.js';

/**
 * An optional status page for the cluster's locked jobs: jobs (schedule, next fire, holder, pause, last run,
 * a run-time chart), nodes, and pause / resume / trigger / unlock buttons, with its JSON endpoints under
 * `<path>/api/`. Imported from `nest-scheduler-lock/dashboard`, beside `SchedulerLockModule` (global, the
 * default, with the Redis provider), in an app with an HTTP platform (tested on `@nestjs/platform-express`
 * and `@nestjs/platform-fastify`).
 *
 * Closed by default: `forRoot` throws without an `authorize(request)` callback.
 */
@Module({})
export class SchedulerLockDashboardModule implements OnApplicationBootstrap {
  constructor(@Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings) {}

  /**
   * The page at `options.path` (default `/scheduler-lock`). Throws a `SchedulerLockConfigurationError` without
   * `authorize` (or `dangerouslyAllowEveryone: true` outside production), with a path that is not plain, a host
   * or origin that is not one, and with an unknown or wrongly typed option (`readOnly: 'true'` included).
   */
  static forRoot<TRequest = unknown>(options: SchedulerLockDashboardOptions<TRequest>): DynamicModule {
    const settings = createDashboardSettings(options);
    // A class of its own per forRoot(): the route path is metadata of the controller class.
    class MountedDashboardController extends DashboardController {}
    Controller(settings.path)(MountedDashboardController);
    return {
      module: SchedulerLockDashboardModule,
      controllers: [MountedDashboardController],
      providers: [{ provide: DASHBOARD_SETTINGS, useValue: settings }, DashboardAccessGuard],
    };
  }

  /** `NODE_ENV` read again: an app may set it after `forRoot()` ran (`dotenv` in `bootstrap()`). */
  onApplicationBootstrap(): void {
    if (!this.settings.open) return;
    assertNotProduction(this.settings.environment);
    new Logger('SchedulerLockDashboard').warn(
      `The status page at ${this.settings.path} lets everyone see and steer the locked jobs ` +
        '(dangerouslyAllowEveryone): for a developer machine only',
    );
  }
}
