import { connect, createServer, type Server, type Socket } from 'node:net';

/**
 * What the proxy does with traffic:
 * - `forward`: passes bytes both ways;
 * - `stall`: stops forwarding and keeps every socket open; what arrives meanwhile is held and
 *   delivered, in order, when forwarding resumes (a network that delays packets, TCP retransmitting);
 * - `black-hole`: accepts connections and never answers; bytes in either direction are dropped. A TCP
 *   stream never delivers data after a hole, so when the black hole ends, every connection that lost
 *   bytes is reset, as a retransmission timeout would end it;
 * - `reset`: resets (RST) every open connection and every new one at once (a refused connection).
 */
export type ProxyMode = 'forward' | 'stall' | 'black-hole' | 'reset';

/** A client connection and its connection to the upstream server. */
interface Link {
  readonly client: Socket;
  readonly upstream: Socket;
  /** Bytes held while stalled, per direction, in arrival order. */
  readonly held: { toUpstream: Buffer[]; toClient: Buffer[] };
  /** The link dropped bytes (black hole): it can never carry a whole stream again. */
  lostBytes: boolean;
}

/**
 * A TCP proxy on a free loopback port in front of `127.0.0.1:<upstreamPort>`, whose {@link ProxyMode}
 * can be switched at any time: one app's private path to the store (Redis, PostgreSQL), to partition that app alone.
 */
export class FaultProxy {
  private readonly links = new Set<Link>();
  private current: ProxyMode = 'forward';

  private constructor(
    private readonly server: Server,
    readonly port: number,
    private readonly upstreamPort: number,
  ) {
    server.on('connection', (client) => this.accept(client));
  }

  static async start(upstreamPort: number): Promise<FaultProxy> {
    const server = createServer();
    const port = await new Promise<number>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => resolve((server.address() as { port: number }).port));
    });
    return new FaultProxy(server, port, upstreamPort);
  }

  get mode(): ProxyMode {
    return this.current;
  }

  /** Connections open now (for tests). */
  get openLinks(): number {
    return this.links.size;
  }

  setMode(mode: ProxyMode): void {
    const previous = this.current;
    this.current = mode;
    if (mode === 'reset') {
      for (const link of this.links) this.cut(link);
    } else if (mode === 'forward') {
      for (const link of this.links) {
        if (previous === 'black-hole' && link.lostBytes) this.cut(link);
        else this.release(link);
      }
    }
  }

  /** Stops listening and closes every connection. */
  async close(): Promise<void> {
    for (const link of this.links) this.cut(link);
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private accept(client: Socket): void {
    client.on('error', () => undefined); // a reset peer; 'close' cleans up
    if (this.current === 'reset') {
      client.resetAndDestroy();
      return;
    }
    const upstream = connect(this.upstreamPort, '127.0.0.1');
    upstream.on('error', () => undefined); // refused while the store is down: 'close' ends the client too
    const link: Link = { client, upstream, held: { toUpstream: [], toClient: [] }, lostBytes: false };
    this.links.add(link);
    client.setNoDelay(true);
    upstream.setNoDelay(true);
    client.on('data', (chunk: Buffer) => this.pass(link, chunk, upstream, link.held.toUpstream, client));
    upstream.on('data', (chunk: Buffer) => this.pass(link, chunk, client, link.held.toClient, upstream));
    // Either side closing ends the other: a killed store closes its apps' connections, as without a proxy.
    const end = () => {
      this.links.delete(link);
      client.destroy();
      upstream.destroy();
    };
    client.on('close', end);
    upstream.on('close', end);
  }

  private pass(link: Link, chunk: Buffer, to: Socket, held: Buffer[], from: Socket): void {
    if (this.current === 'stall') {
      held.push(chunk);
    } else if (this.current === 'black-hole') {
      link.lostBytes = true;
    } else if (this.current === 'forward') {
      this.write(to, chunk, from);
    }
  }

  /** Delivers what was held while stalled. */
  private release(link: Link): void {
    for (const chunk of link.held.toUpstream.splice(0)) this.write(link.upstream, chunk, link.client);
    for (const chunk of link.held.toClient.splice(0)) this.write(link.client, chunk, link.upstream);
  }

  /** Writes with backpressure: the sending side stops being read until the receiving side drains. */
  private write(to: Socket, chunk: Buffer, from: Socket): void {
    if (to.destroyed) return;
    if (!to.write(chunk)) {
      from.pause();
      to.once('drain', () => from.resume());
    }
  }

  /** Resets both sides of a link. */
  private cut(link: Link): void {
    this.links.delete(link);
    link.client.resetAndDestroy();
    link.upstream.resetAndDestroy();
  }
}
