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
  readonly log = this.recorderOf('log');
  readonly error = this.recorderOf('error');
  readonly warn = this.recorderOf('warn');
  readonly debug = this.recorderOf('debug');
  readonly verbose = this.recorderOf('verbose');
  readonly fatal = this.recorderOf('fatal');

  /** The entries of `level`, only those under `context` when it is given. */
  lines(level: LogLevel, context?: string): LogEntry[] {
    return this.entries.filter(
      (entry) => entry.level === level && (context === undefined || entry.context === context),
    );
  }

  /** The messages of {@link lines} as text (an `Error` as its message). */
  texts(level: LogLevel, context?: string): string[] {
    return this.lines(level, context).map(({ message }) =>
      message instanceof Error ? message.message : String(message),
    );
  }

  /** The `LoggerService` method of `level`: it keeps each line, with the context Nest passes last. */
  private recorderOf(level: LogLevel): (message: unknown, ...params: unknown[]) => void {
    return (message, ...params) => {
      const last = params.at(-1);
      this.entries.push({ level, message, context: typeof last === 'string' ? last : undefined });
    };
  }
}
