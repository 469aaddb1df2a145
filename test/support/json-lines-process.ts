import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';

/** How to start a Node script that reports to its parent as JSON lines on stdout. */
export interface JsonLinesProcessOptions<M> {
  /** The compiled `.js` script to run. */
  script: string;
  /** Node options before the script, e.g. `['--import', preload]`. */
  nodeArgs?: string[];
  /** Added to this process's environment. */
  env?: NodeJS.ProcessEnv;
  /** Called for each stdout line that parses as JSON. */
  onMessage(message: M): void;
  /** Called for each line of stderr (a Nest app's log lines). */
  onStderrLine?(line: string): void;
  /** Called when the process exits for any reason other than {@link JsonLinesProcess.kill}. */
  onUnexpectedExit?(description: string): void;
}

/** A child Node process whose stdout is a stream of JSON messages. */
export interface JsonLinesProcess {
  readonly pid: number;
  /** The last lines of stderr and of non-JSON stdout, to explain a failure. */
  diagnostics(): string;
  /** SIGKILLs the process by PID (no cleanup of any kind runs in it) and waits until it is gone. */
  kill(): Promise<void>;
}

const DIAGNOSTIC_LINES = 40;

/**
 * Spawns `node [nodeArgs] script` and parses its stdout as one JSON message per line. Both pipes are
 * always drained, so a chatty child never blocks on a full pipe.
 */
export function spawnJsonLinesProcess<M>(options: JsonLinesProcessOptions<M>): JsonLinesProcess {
  const child = spawn(process.execPath, [...(options.nodeArgs ?? []), options.script], {
    env: { ...process.env, ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const tail: string[] = [];
  const keep = (line: string) => {
    tail.push(line);
    if (tail.length > DIAGNOSTIC_LINES) tail.shift();
  };

  createInterface({ input: child.stdout! }).on('line', (line) => {
    let message: M;
    try {
      message = JSON.parse(line) as M;
    } catch {
      keep(`stdout: ${line}`);
      return;
    }
    options.onMessage(message);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => {
    keep(line);
    options.onStderrLine?.(line);
  });

  let killed = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', (code, signal) => {
      if (!killed)
        options.onUnexpectedExit?.(`pid ${child.pid} exited (code ${code}, signal ${signal})\n${tail.join('\n')}`);
      resolve();
    }),
  );

  return {
    pid: child.pid!,
    diagnostics: () => tail.join('\n'),
    async kill() {
      killed = true;
      if (child.exitCode === null && child.signalCode === null) process.kill(child.pid!, 'SIGKILL');
      await exited;
    },
  };
}
