import { createWriteStream, readFileSync, type WriteStream } from 'node:fs';
import type { RunLogLine } from './journal.js';

/** The soak's run log: kept in memory for the analysis and written to `path`, one JSON line each. */
export class RunLog {
  readonly lines: RunLogLine[] = [];
  private readonly file: WriteStream;

  constructor(readonly path: string) {
    this.file = createWriteStream(path, { flags: 'w' });
  }

  record(line: RunLogLine): void {
    this.lines.push(line);
    this.file.write(`${JSON.stringify(line)}\n`);
  }

  /** Flushes and closes the file. */
  close(): Promise<void> {
    return new Promise((resolve, reject) =>
      this.file.end((error?: Error | null) => (error ? reject(error) : resolve())),
    );
  }
}

/** The lines of a run log file, for `--analyze`. */
export function readRunLog(path: string): RunLogLine[] {
  return readFileSync(path, 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line, index) => {
      try {
        return JSON.parse(line) as RunLogLine;
      } catch {
        throw new Error(`${path}:${index + 1} is not a JSON line: ${line.slice(0, 120)}`);
      }
    });
}
