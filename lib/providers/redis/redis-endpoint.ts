import type { Redis } from 'ioredis';
import type { RedisClient } from './redis-client.js';

/** How many nodes of a Sentinel or Cluster list a message names before "and N more". */
const NODES_NAMED = 3;

/**
 * Where a client connects, for messages: `host:port`, the Sentinel master and sentinels, or the
 * Cluster's startup nodes. Never a password or user name: only hosts and ports are read.
 */
export function describeRedisEndpoint(client: RedisClient): string {
  if (client.isCluster) {
    const startupNodes = (client as unknown as { startupNodes?: unknown[] }).startupNodes ?? [];
    return `Cluster ${nodeList(startupNodes)}`;
  }
  const { host, port, path, sentinels, name } = (client as Redis).options;
  if (sentinels?.length) return `master "${name ?? 'mymaster'}" via Sentinel ${nodeList(sentinels)}`;
  if (path) return path;
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}

/** `host:port` of each node as ioredis accepts them (objects, `host:port`, URLs, bare ports), hiding credentials. */
function nodeList(nodes: readonly unknown[]): string {
  const named = nodes.slice(0, NODES_NAMED).map(hostPort);
  const more = nodes.length - named.length;
  return more > 0 ? `${named.join(', ')} and ${more} more` : named.join(', ');
}

function hostPort(node: unknown): string {
  if (typeof node === 'number') return `localhost:${node}`;
  if (typeof node === 'string') {
    try {
      const url = new URL(node.includes('://') ? node : `redis://${node}`);
      return `${url.hostname}:${url.port || 6379}`;
    } catch {
      return 'an unparsable node address';
    }
  }
  const { host, port } = (node ?? {}) as { host?: string; port?: number };
  return `${host ?? 'localhost'}:${port ?? 6379}`;
}
