import type { LoggerService, LogLevel } from '@nestjs/common';

/** One line a Nest app logged. */
export interface LogEntry {
  readonly level: LogLevel;
  /** What was passed to the logger: usually a string, an `Error` for `logger.error(error)`. */
  readonly message: unknown;
  /** The `Logger` context (`new Logger('Scheduler')` → `'Scheduler'`), if any. */
  readonly context: string | undefined;
}

/**
 * A Nest `LoggerService` that keeps every line in memory and prints nothing. Pass it to
 * `Test.createTestingModule(...).setLogger(logger)`: Nest's `Logger` instances forward to it, with
 * their context as the last argument.
 */
export class CapturedLogger implements LoggerService {
  readonly entries: LogEntry[] = [];

  log(message: unknown, ...params: unknown[]): void {
    this.record('log', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.record('error', message, params);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.record('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.record('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.record('verbose', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.record('fatal', message, params);
  }

  /** The entries of `level`, only those under `context` when it is given. */
  lines(level: LogLevel, context?: string): LogEntry[] {
    return this.entries.filter((entry) => entry.level === level && (context === undefined || entry.context === context));
  }

  /** The messages of {@link lines} as text (an `Error` as its message). */
  texts(level: LogLevel, context?: string): string[] {
    return this.lines(level, context).map(({ message }) => (message instanceof Error ? message.message : String(message)));
  }

  private record(level: LogLevel, message: unknown, params: unknown[]): void {
    const last = params.at(-1);
    this.entries.push({ level, message, context: typeof last === 'string' ? last : undefined });
  }
}
