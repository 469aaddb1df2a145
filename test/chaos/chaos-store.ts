import type { ChaosStoreKind } from './journal.js';

/**
 * The store server of a soak, private to it (a free loopback port, a temp dir, never the shared server):
 * what the fault injector does to it and what the apps are told to connect to. {@link AofRedisServer} and
 * {@link ChaosPostgres} are the two.
 */
export interface ChaosStore {
  readonly kind: ChaosStoreKind;
  readonly port: number;
  /** The server's main PID, `undefined` while it is down. */
  readonly pid: number | undefined;
  /** Where it runs, for the soak's start line. */
  readonly description: string;
  /** The URL that reaches the store through a proxy on loopback `port`. */
  urlThrough(port: number): string;
  /** `kill -9` of every process of the server, by PID; resolves once they have exited. */
  kill(): Promise<void>;
  /** Starts it again on the same port with the same data; resolves once it answers. */
  restart(): Promise<void>;
  /** SIGSTOP of every process of the server: connections stay open, nothing is answered. */
  pause(): Promise<void>;
  /** SIGCONT. */
  resume(): Promise<void>;
  /** Kills the server (a paused one too) and removes its files. */
  stop(): Promise<void>;
}

/** Starts `kind`'s server; `onUnexpectedExit` is told when it exits other than through `kill()` / `stop()`. */
export async function startChaosStore(
  kind: ChaosStoreKind,
  onUnexpectedExit: (pid: number) => void,
): Promise<ChaosStore> {
  if (kind === 'redis') {
    const { AofRedisServer } = await import('./aof-redis.js');
    return AofRedisServer.start(onUnexpectedExit);
  }
  const { ChaosPostgres } = await import('./chaos-postgres.js');
  return ChaosPostgres.start(onUnexpectedExit);
}
