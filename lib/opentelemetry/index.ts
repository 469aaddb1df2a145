/**
 * nest-scheduler-lock/opentelemetry: apart from the main entry, so that an app without @opentelemetry/api
 * never loads it.
 *
 * @module nest-scheduler-lock/opentelemetry
 */

export { SchedulerLockTelemetry, type SchedulerLockTelemetryOptions } from './scheduler-lock-telemetry.js';
