// nest-scheduler-lock/opentelemetry: apart from the main entry, so that an app without @opentelemetry/api
// never loads it.
export { SchedulerLockTelemetry, type SchedulerLockTelemetryOptions } from './scheduler-lock-telemetry.js';
