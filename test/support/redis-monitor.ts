import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';

/** Records, through `MONITOR`, the commands clients send to a Redis (and, if asked, those Lua scripts run). */
export interface CommandRecorder {
  /**
   * The command names (lower case) clients sent since the previous call, in order. Sends a marker
   * through `client` and waits for it, so every command that completed before the call is included.
   */
  take(): Promise<string[]>;
  /** Ends monitoring and closes the monitor connection. */
  close(): Promise<void>;
}

/**
 * Starts monitoring the server `client` is connected to. MONITOR costs every client of that server,
 * so use it on a private server (test/support/redis-server.ts), never on the shared one. The commands
 * Lua scripts run are left out unless `includeScripts`.
 */
export async function recordCommands(client: Redis, { includeScripts = false } = {}): Promise<CommandRecorder> {
  const monitor = await client.monitor();
  let seen: string[] = [];
  const markers = new Map<string, () => void>();
  monitor.on('monitor', (_time: string, args: string[], source: string) => {
    if (source === 'lua' && !includeScripts) return;
    const [command = '', marker] = args;
    const arrived = command.toLowerCase() === 'echo' ? markers.get(marker) : undefined;
    if (arrived) arrived();
    else seen.push(command.toLowerCase());
  });
  return {
    async take() {
      const marker = `recorder-${randomUUID()}`;
      const arrived = new Promise<void>((resolve) => markers.set(marker, resolve));
      await client.echo(marker);
      await arrived;
      markers.delete(marker);
      const taken = seen;
      seen = [];
      return taken;
    },
    async close() {
      monitor.disconnect();
    },
  };
}
