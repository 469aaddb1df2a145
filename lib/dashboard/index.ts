/**
 * The optional status page: `nest-scheduler-lock/dashboard`. Nothing in the main entry imports it.
 *
 * @module nest-scheduler-lock/dashboard
 */

export { SchedulerLockDashboardModule } from './scheduler-lock-dashboard.module.js';
export { DEFAULT_DASHBOARD_PATH } from './dashboard-option-checks.js';
export {
  ANONYMOUS_ACTOR,
  type DashboardAccess,
  type DashboardAuthorize,
  type SchedulerLockDashboardOptions,
} from './dashboard-options.js';
export { OPERATOR_ACTION_HEADER } from './dashboard-request.js';
export type { DashboardJob, DashboardRun } from './dashboard.controller.js';
