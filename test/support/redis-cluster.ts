import { join } from 'node:path';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { freePort } from './redis-server.js';
import { ephemeralServerArgs, spawnRedisProcessInTempDir, type RedisProcess } from './redis-process.js';
import { waitUntil } from './wait-until.js';

/** The number of hash slots of a Redis Cluster. */
const CLUSTER_SLOTS = 16_384;

/** A Redis Cluster of private `redis-server` processes, each a master of one share of the slots. */
export interface PrivateRedisCluster {
  /** The masters' client ports; master `i` serves the `i`-th share of the slots, in slot order. */
  readonly ports: readonly number[];
  readonly startupNodes: readonly { host: string; port: number }[];
  /** A new `Cluster` client onto these nodes; the caller closes it. */
  connect(options?: ClusterOptions): Cluster;
  /** SIGKILLs every node by PID and removes their temp dirs. */
  stop(): Promise<void>;
}

interface NodeAddress {
  readonly port: number;
  /** The cluster bus port, chosen free rather than `port + 10000`, which may be taken or out of range. */
  readonly busPort: number;
}

const HOST = '127.0.0.1';
const CONVERGENCE_TIMEOUT_MS = 20_000;

/**
 * Starts `masters` cluster-enabled `redis-server`s (no persistence, no replicas) on free ports, gives
 * each a contiguous share of the slots and joins them with `CLUSTER MEET`, as `redis-cli --cluster
 * create` would. Resolves once every node reports `cluster_state:ok` and knows every slot and node.
 * A failed start stops what it started.
 */
export async function startPrivateRedisCluster(masters = 3): Promise<PrivateRedisCluster> {
  const ports = await distinctFreePorts(2 * masters);
  const addresses = ports.slice(0, masters).map((port, i) => ({ port, busPort: ports[masters + i] }));
  const started = await Promise.allSettled(addresses.map(startNode));
  const nodes = started.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
  const stop = async () => {
    await Promise.all(nodes.map((node) => node.kill()));
  };
  try {
    const failure = started.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    await joinCluster(addresses);
  } catch (error) {
    await stop();
    throw error;
  }
  const startupNodes = addresses.map(({ port }) => ({ host: HOST, port }));
  return {
    ports: addresses.map(({ port }) => port),
    startupNodes,
    connect: (options) => new Cluster(startupNodes, options),
    stop,
  };
}

/**
 * Deletes every key under `prefix` on every master of `cluster` (SCAN per node, one key per `UNLINK`:
 * keys of different slots cannot share a command, even on one node).
 */
export async function deleteClusterKeys(cluster: Cluster, prefix: string): Promise<void> {
  await Promise.all(
    cluster.nodes('master').map(async (node) => {
      for await (const keys of node.scanStream({ match: `${prefix}*`, count: 1000 })) {
        await Promise.all((keys as string[]).map((key) => node.unlink(key)));
      }
    }),
  );
}

function startNode({ port, busPort }: NodeAddress): Promise<RedisProcess> {
  const clusterArgs = (dir: string) => ({
    '--cluster-enabled': 'yes',
    '--cluster-config-file': join(dir, `nodes-${port}.conf`),
    '--cluster-port': String(busPort),
  });
  return spawnRedisProcessInTempDir(port, (dir) => [...ephemeralServerArgs(port, dir), ...Object.entries(clusterArgs(dir)).flat()]);
}

async function joinCluster(addresses: readonly NodeAddress[]): Promise<void> {
  const admins = addresses.map(({ port }) => new Redis({ host: HOST, port, maxRetriesPerRequest: 1 }));
  try {
    await Promise.all(
      admins.map(async (admin, i) => {
        const [first, last] = slotShare(i, admins.length);
        await admin.call('CLUSTER', 'ADDSLOTSRANGE', first, last);
        // Distinct config epochs up front, as redis-cli sets them, spare the nodes a collision round.
        await admin.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
      }),
    );
    const [introducer] = admins;
    for (const { port, busPort } of addresses.slice(1)) await introducer.call('CLUSTER', 'MEET', HOST, port, busPort);
    await waitUntil(
      async () => (await Promise.all(admins.map((admin) => knowsWholeCluster(admin, addresses.length)))).every(Boolean),
      `every node of the cluster on ports ${addresses.map(({ port }) => port).join(', ')} reports cluster_state:ok`,
      { timeoutMs: CONVERGENCE_TIMEOUT_MS, intervalMs: 50 },
    );
  } finally {
    admins.forEach((admin) => admin.disconnect());
  }
}

/** The first and last slot of master `index` of `masters`. */
function slotShare(index: number, masters: number): [number, number] {
  const first = Math.floor((index * CLUSTER_SLOTS) / masters);
  const last = Math.floor(((index + 1) * CLUSTER_SLOTS) / masters) - 1;
  return [first, last];
}

async function knowsWholeCluster(admin: Redis, masters: number): Promise<boolean> {
  const info = parseInfo((await admin.call('CLUSTER', 'INFO')) as string);
  return (
    info.cluster_state === 'ok' &&
    info.cluster_slots_ok === String(CLUSTER_SLOTS) &&
    info.cluster_known_nodes === String(masters) &&
    info.cluster_size === String(masters)
  );
}

function parseInfo(text: string): Record<string, string> {
  return Object.fromEntries(text.split(/\r?\n/).filter(Boolean).map((line) => line.split(':', 2) as [string, string]));
}

/** `count` free ports, all different (each {@link freePort} call alone may repeat an earlier one). */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
