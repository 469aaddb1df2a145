import type { Redis } from 'ioredis';

/** Counts the commands an ioredis client sends, by name. */
export interface CommandCounter {
  /** Commands sent since the counter was installed. */
  readonly total: number;
  /** Commands sent since the counter was installed, by lower-case command name. */
  readonly byName: ReadonlyMap<string, number>;
  /** Puts the client's own `sendCommand` back. */
  uninstall(): void;
}

/**
 * Wraps `client.sendCommand`, the one method every ioredis command goes through (script calls included,
 * and the `EVAL` resent after a NOSCRIPT reply), so a count is exact even on a Redis that
 * other processes use. Install it only outside timed sections: the wrapper costs a little per call.
 * Counting starts once the client is ready, because ioredis re-sends commands queued while offline.
 */
export function countCommands(client: Redis): CommandCounter {
  if (client.status !== 'ready') throw new Error(`countCommands: client is ${client.status}, not ready`);
  const original = client.sendCommand;
  const byName = new Map<string, number>();
  let total = 0;
  client.sendCommand = function countingSendCommand(this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    const name = args[0].name.toLowerCase();
    byName.set(name, (byName.get(name) ?? 0) + 1);
    total += 1;
    return original.apply(this, args);
  } as Redis['sendCommand'];
  return {
    get total() {
      return total;
    },
    byName,
    uninstall() {
      client.sendCommand = original;
    },
  };
}
