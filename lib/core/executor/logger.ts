/**
 * Where the lock layer writes its lines. Nest's `Logger` fits it as is, and the module hands one in;
 * the core itself stays free of any framework.
 */
export interface SchedulerLockLogger {
  log(message: string): void;
  warn(message: string): void;
  error(message: unknown): void;
  debug(message: string): void;
}

/** The logger of an executor built outside Nest: the console, each line tagged like Nest's context. */
export const consoleLogger: SchedulerLockLogger = {
  log: (message) => console.log(`[SchedulerLock] ${message}`),
  warn: (message) => console.warn(`[SchedulerLock] ${message}`),
  error: (message) => console.error(`[SchedulerLock]`, message),
  debug: (message) => console.debug(`[SchedulerLock] ${message}`),
};
