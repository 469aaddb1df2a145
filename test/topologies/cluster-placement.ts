import type { Cluster, Redis } from 'ioredis';
import { type RedisLockProvider } from '../../lib/providers/redis/index.js';

/** Where a key lives in a Cluster: its hash slot and the master serving it (`host:port`). */
export interface KeyPlacement {
  readonly slot: number;
  readonly master: string;
}

/** Gives up looking for names on every master after this many candidates (a few dozen suffice). */
const MAX_CANDIDATES = 1_000;

/** The slot of `key` (`CLUSTER KEYSLOT`) and, from the client's slot map, the master that serves it. */
export async function placementOf(cluster: Cluster, key: string): Promise<KeyPlacement> {
  const slot = Number(await cluster.call('CLUSTER', 'KEYSLOT', key));
  const master = cluster.slots[slot]?.[0];
  if (!master) throw new Error(`the cluster client knows no master of slot ${slot}`);
  return { slot, master };
}

/** The masters of the cluster in slot order, as `host:port`. */
export function mastersInSlotOrder(cluster: Cluster): string[] {
  return [...new Set(cluster.slots.map((owners) => owners[0]))];
}

/**
 * `count` lock names whose lock keys land on the masters in turn: name `i` on the `i % masters`-th
 * master in slot order. Candidates are `<label>-0`, `<label>-1`, …, so the choice is the same every run.
 */
export async function namesAcrossMasters(
  cluster: Cluster,
  provider: RedisLockProvider,
  count: number,
  label: string,
): Promise<string[]> {
  const masters = mastersInSlotOrder(cluster);
  const names: string[] = [];
  for (let candidate = 0; names.length < count && candidate < MAX_CANDIDATES; candidate += 1) {
    const name = `${label}-${candidate}`;
    const { master } = await placementOf(cluster, provider.lockKey(name));
    if (master === masters[names.length % masters.length]) names.push(name);
  }
  if (names.length < count) throw new Error(`found only ${names.length} of ${count} names spread over the masters`);
  return names;
}

/** The cluster client's own connection to `master` (`host:port`), for commands on that node alone. */
export function masterConnection(cluster: Cluster, master: string): Redis {
  const node = cluster.nodes('master').find(({ options }) => `${options.host}:${options.port}` === master);
  if (!node) throw new Error(`the cluster client has no connection to master ${master}`);
  return node;
}
