import { join } from 'node:path';
import { Cluster, Redis, type ClusterOptions } from 'ioredis';
import { freePort } from './redis-server.js';
import { ephemeralServerArgs, spawnRedisProcessInTempDir, type RedisProcessInTempDir } from './redis-process.js';
import { waitUntil } from './wait-until.js';

/** The number of hash slots of a Redis Cluster. */
const CLUSTER_SLOTS = 16_384;

/** A Redis Cluster of private `redis-server` processes, each master serving one share of the slots. */
export interface PrivateRedisCluster {
  /** The masters' client ports; master `i` serves the `i`-th share of the slots, in slot order. */
  readonly ports: readonly number[];
  /** With replicas: the replica of master `i` listens on `replicaPorts[i]`. */
  readonly replicaPorts: readonly number[];
  readonly startupNodes: readonly { host: string; port: number }[];
  /** A new `Cluster` client onto these nodes; the caller closes it. */
  connect(options?: ClusterOptions): Cluster;
  /** SIGKILLs the node on `port` by PID (and removes its temp dir), as a crash would. */
  kill(port: number): Promise<void>;
  /** SIGKILLs every node by PID and removes their temp dirs. */
  stop(): Promise<void>;
  /** Hands the nodes to the run's teardown: this process no longer waits for them; their PIDs and temp dirs. */
  handOver(): { pids: number[]; dirs: string[] };
}

/** Options of {@link startPrivateRedisCluster}. */
export interface PrivateRedisClusterOptions {
  /** Default 3. */
  readonly masters?: number;
  /** One replica per master, which the Cluster promotes when its master fails. Default `false`. */
  readonly replicas?: boolean;
  /** How long a node may not answer before the others mark it failed (`cluster-node-timeout`). Default Redis's, 15 s. */
  readonly nodeTimeoutMs?: number;
}

interface NodeAddress {
  readonly port: number;
  /** The cluster bus port, chosen free rather than `port + 10000`, which may be taken or out of range. */
  readonly busPort: number;
}

const HOST = '127.0.0.1';
const CONVERGENCE_TIMEOUT_MS = 20_000;

/**
 * Starts `masters` cluster-enabled `redis-server`s (no persistence) on free ports, gives each a
 * contiguous share of the slots and joins them with `CLUSTER MEET`, as `redis-cli --cluster create`
 * would; with `replicas`, one more node per master replicates it. Resolves once every node reports
 * `cluster_state:ok` and knows every slot and node, and every replica is linked to its master. A failed
 * start stops what it started.
 */
export async function startPrivateRedisCluster({
  masters = 3,
  replicas = false,
  nodeTimeoutMs,
}: PrivateRedisClusterOptions = {}): Promise<PrivateRedisCluster> {
  const nodeCount = replicas ? 2 * masters : masters;
  const ports = await distinctFreePorts(2 * nodeCount);
  const addresses = ports.slice(0, nodeCount).map((port, i) => ({ port, busPort: ports[nodeCount + i] }));
  const started = await Promise.allSettled(addresses.map((address) => startNode(address, nodeTimeoutMs)));
  const nodes = new Map(
    started.flatMap((outcome, i) =>
      outcome.status === 'fulfilled' ? [[addresses[i].port, outcome.value] as const] : [],
    ),
  );
  const kill = async (port: number) => {
    await nodes.get(port)?.kill();
    nodes.delete(port);
  };
  const stop = async () => {
    await Promise.all([...nodes.keys()].map(kill));
  };
  try {
    const failure = started.find((outcome) => outcome.status === 'rejected');
    if (failure) throw failure.reason;
    await joinCluster(addresses.slice(0, masters), addresses.slice(masters));
  } catch (error) {
    await stop();
    throw error;
  }
  const startupNodes = addresses.slice(0, masters).map(({ port }) => ({ host: HOST, port }));
  return {
    ports: startupNodes.map(({ port }) => port),
    replicaPorts: addresses.slice(masters).map(({ port }) => port),
    startupNodes,
    connect: (options) => new Cluster(startupNodes, options),
    kill,
    stop,
    handOver() {
      nodes.forEach((node) => node.unref());
      return { pids: [...nodes.values()].map(({ pid }) => pid), dirs: [...nodes.values()].map(({ dir }) => dir) };
    },
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

function startNode({ port, busPort }: NodeAddress, nodeTimeoutMs: number | undefined): Promise<RedisProcessInTempDir> {
  const clusterArgs = (dir: string) => ({
    '--cluster-enabled': 'yes',
    '--cluster-config-file': join(dir, `nodes-${port}.conf`),
    '--cluster-port': String(busPort),
    ...(nodeTimeoutMs === undefined ? {} : { '--cluster-node-timeout': String(nodeTimeoutMs) }),
  });
  return spawnRedisProcessInTempDir(port, (dir) => [
    ...ephemeralServerArgs(port, dir),
    ...Object.entries(clusterArgs(dir)).flat(),
  ]);
}

async function joinCluster(masters: readonly NodeAddress[], replicas: readonly NodeAddress[]): Promise<void> {
  const all = [...masters, ...replicas];
  const admins = all.map(({ port }) => new Redis({ host: HOST, port, maxRetriesPerRequest: 1 }));
  const ports = all.map(({ port }) => port).join(', ');
  const waitFor = (condition: (admin: Redis) => Promise<boolean>, nodes: readonly Redis[], what: string) =>
    waitUntil(
      async () => (await Promise.all(nodes.map(condition))).every(Boolean),
      `${what} (cluster on ports ${ports})`,
      {
        timeoutMs: CONVERGENCE_TIMEOUT_MS,
        intervalMs: 50,
      },
    );
  const converged = (admin: Redis) => knowsWholeCluster(admin, masters.length, all.length);
  try {
    await Promise.all(
      admins.slice(0, masters.length).map(async (admin, i) => {
        const [first, last] = slotShare(i, masters.length);
        await admin.call('CLUSTER', 'ADDSLOTSRANGE', first, last);
        // Distinct config epochs up front, as redis-cli sets them, spare the nodes a collision round.
        await admin.call('CLUSTER', 'SET-CONFIG-EPOCH', i + 1);
      }),
    );
    const [introducer] = admins;
    for (const { port, busPort } of all.slice(1)) await introducer.call('CLUSTER', 'MEET', HOST, port, busPort);
    await waitFor(converged, admins, 'every node reports cluster_state:ok');
    if (replicas.length === 0) return;
    // A node can only replicate a master it knows, hence after the whole cluster converged.
    const replicaAdmins = admins.slice(masters.length);
    await Promise.all(
      replicaAdmins.map(async (replica, i) =>
        replica.call('CLUSTER', 'REPLICATE', (await admins[i].call('CLUSTER', 'MYID')) as string),
      ),
    );
    await waitFor(
      async (replica) => /^master_link_status:up/m.test(await replica.info('replication')),
      replicaAdmins,
      'every replica is linked to its master',
    );
    await waitFor(converged, admins, 'every node reports cluster_state:ok with its replicas');
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

async function knowsWholeCluster(admin: Redis, masters: number, nodes: number): Promise<boolean> {
  const info = parseInfo((await admin.call('CLUSTER', 'INFO')) as string);
  return (
    info.cluster_state === 'ok' &&
    info.cluster_slots_ok === String(CLUSTER_SLOTS) &&
    info.cluster_known_nodes === String(nodes) &&
    info.cluster_size === String(masters)
  );
}

function parseInfo(text: string): Record<string, string> {
  return Object.fromEntries(
    text
      .split(/\r?\n/)
      .filter(Boolean)
      .map((line) => line.split(':', 2) as [string, string]),
  );
}

/** `count` free ports, all different (each {@link freePort} call alone may repeat an earlier one). */
async function distinctFreePorts(count: number): Promise<number[]> {
  const ports = new Set<number>();
  while (ports.size < count) ports.add(await freePort());
  return [...ports];
}
