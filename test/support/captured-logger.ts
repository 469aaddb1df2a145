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
  private readonly waiting = new Set<(entry: LogEntry) => void>();
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

  /**
   * Resolves with the first text of `level` that matches `pattern`, logged already or from now on; rejects
   * after `ms`.
   */
  nextText(level: LogLevel, pattern: RegExp, ms = 10_000): Promise<string> {
    const logged = this.texts(level).find((text) => pattern.test(text));
    if (logged !== undefined) return Promise.resolve(logged);
    return new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(watch);
        reject(new Error(`No ${level} line matching ${pattern} within ${ms} ms`));
      }, ms);
      const watch = ({ level: logged, message }: LogEntry) => {
        const text = message instanceof Error ? message.message : String(message);
        if (logged !== level || !pattern.test(text)) return;
        clearTimeout(timer);
        this.waiting.delete(watch);
        resolve(text);
      };
      this.waiting.add(watch);
    });
  }

  /** The `LoggerService` method of `level`: it keeps each line, with the context Nest passes last. */
  private recorderOf(level: LogLevel): (message: unknown, ...params: unknown[]) => void {
    return (message, ...params) => {
      const last = params.at(-1);
      const entry = { level, message, context: typeof last === 'string' ? last : undefined };
      this.entries.push(entry);
      for (const watch of this.waiting) watch(entry);
    };
  }
}
