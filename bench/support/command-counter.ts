import type { Redis } from 'ioredis';

/** Counts the commands an ioredis client sends, by name. */
export interface CommandCounter {
  /** Commands sent since the counter was installed. */
  readonly total: number;
  /**
   * Requests sent since the counter was installed, each waiting for its own reply: a command sent alone
   * counts one, and so does a whole pipeline or transaction (`pipeline()`, `multi()`, auto-pipelining),
   * whatever the number of commands in it.
   */
  readonly roundTrips: number;
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
  // ioredis hands every command of one pipeline the same stream object, one per exec().
  const pipelines = new WeakSet<object>();
  let total = 0;
  let roundTrips = 0;
  client.sendCommand = function countingSendCommand(this: Redis, ...args: Parameters<Redis['sendCommand']>) {
    const [command, pipeline] = args;
    const name = command.name.toLowerCase();
    byName.set(name, (byName.get(name) ?? 0) + 1);
    total += 1;
    if (pipeline === undefined) roundTrips += 1;
    else if (!pipelines.has(pipeline)) {
      pipelines.add(pipeline);
      roundTrips += 1;
    }
    return original.apply(this, args);
  } as Redis['sendCommand'];
  return {
    get total() {
      return total;
    },
    get roundTrips() {
      return roundTrips;
    },
    byName,
    uninstall() {
      client.sendCommand = original;
    },
  };
}
