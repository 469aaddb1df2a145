import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { TickLine } from '../jobs/tick-line.js';

const MAIN_SCRIPT = fileURLToPath(new URL('../main.js', import.meta.url));
const STOP_GRACE_MS = 5_000;

/** A sample-app instance running as a child process. */
export interface InstanceProcess {
  readonly id: string;
  /** Resolves once the instance has scheduled its jobs; rejects if it exits first. */
  readonly ready: Promise<void>;
  /** Sends SIGTERM (graceful shutdown), then SIGKILL if it is not gone after a few seconds. */
  stop(): Promise<void>;
}

/**
 * Starts `node main.js` as instance `id`. Its tick lines go to `onTick`; anything else it prints
 * (warnings and errors only: the demo quiets Nest's routine logs) is passed on, prefixed with its id.
 */
export function startInstance(id: string, env: NodeJS.ProcessEnv, onTick: (tick: TickLine) => void): InstanceProcess {
  const child = spawn(process.execPath, [MAIN_SCRIPT], {
    env: { ...process.env, NEST_LOG_LEVEL: '>=warn', ...env, INSTANCE_ID: id },
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  createInterface({ input: child.stdout! }).on('line', (line) => {
    const tick = parseTickLine(line);
    if (tick) onTick(tick);
    else console.log(`[${id}] ${line}`);
  });
  createInterface({ input: child.stderr! }).on('line', (line) => console.error(`[${id}] ${line}`));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code, signal) =>
      reject(new Error(`${id} exited before it was ready (code ${code}, signal ${signal})`)),
    );
  });

  return {
    id,
    ready,
    async stop() {
      child.disconnect?.();
      if (!isRunning(child)) return;
      child.kill('SIGTERM');
      const killer = setTimeout(() => child.kill('SIGKILL'), STOP_GRACE_MS);
      await exited;
      clearTimeout(killer);
    },
  };
}

function parseTickLine(line: string): TickLine | undefined {
  try {
    const value = JSON.parse(line) as Partial<TickLine>;
    return typeof value.instance === 'string' && typeof value.job === 'string' && typeof value.tick === 'string'
      ? (value as TickLine)
      : undefined;
  } catch {
    return undefined;
  }
}

function isRunning(child: ChildProcess): boolean {
  return child.exitCode === null && child.signalCode === null;
}
