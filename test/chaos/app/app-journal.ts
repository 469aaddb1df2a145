import { monitorEventLoopDelay } from 'node:perf_hooks';
import { format } from 'node:util';
import type { LoggerService } from '@nestjs/common';
import type { AppLine } from '../journal.js';
import { monoNow } from '../mono-clock.js';

/** An {@link AppLine} without the fields {@link AppJournal.write} adds (distributed over the union). */
type Entry<L = AppLine> = L extends AppLine ? Omit<L, 'node' | 'pid' | 'mono'> : never;

/**
 * This app's journal: one JSON line per entry on stdout (a pipe, written synchronously on Linux, so a
 * line written before a `kill -9` is never lost). Nothing else writes to stdout.
 */
export class AppJournal {
  constructor(readonly node: string) {}

  write(entry: Entry): void {
    process.stdout.write(`${JSON.stringify({ ...entry, node: this.node, pid: process.pid, mono: monoNow() })}\n`);
  }

  /**
   * Journals what would otherwise only reach stderr, or end the process unseen: unhandled rejections,
   * uncaught exceptions (after which the process exits, as Node would), `console.warn` / `console.error`
   * (cron's "Missed execution deadline" goes there), and each second's longest event-loop delay.
   */
  watchProcess(): void {
    process.on('unhandledRejection', (reason) =>
      this.write({ type: 'unhandled', kind: 'unhandledRejection', error: describe(reason) }),
    );
    process.on('uncaughtException', (error) => {
      this.write({ type: 'unhandled', kind: 'uncaughtException', error: describe(error) });
      process.exit(70);
    });
    console.warn = (...args: unknown[]) =>
      this.write({ type: 'log', level: 'warn', context: 'console', message: format(...args) });
    console.error = (...args: unknown[]) =>
      this.write({ type: 'log', level: 'error', context: 'console', message: format(...args) });

    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    setInterval(() => {
      this.write({ type: 'loop-delay', maxMs: Math.round(delay.max / 1e5) / 10 });
      delay.reset();
    }, 1_000).unref();
  }
}

/** Nest's logger for the app: warnings and errors go to the journal, routine lines nowhere. */
export class JournalLogger implements LoggerService {
  constructor(private readonly journal: AppJournal) {}

  log(): void {}

  warn(message: unknown, ...rest: unknown[]): void {
    this.journal.write({ type: 'log', level: 'warn', context: context(rest), message: describe(message) });
  }

  error(message: unknown, ...rest: unknown[]): void {
    this.journal.write({ type: 'log', level: 'error', context: context(rest), message: describe(message) });
  }
}

/** Nest passes the context last (after an optional stack). */
function context(rest: unknown[]): string {
  const last = rest.at(-1);
  return typeof last === 'string' ? last : '';
}

export function describe(value: unknown): string {
  if (value instanceof Error) return `${value.name}: ${value.message}`;
  return typeof value === 'string' ? value : format(value);
}
