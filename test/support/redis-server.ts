import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { Redis } from 'ioredis';

/** A `redis-server` this test started on its own port, so it may stop, kill or restart it. */
export interface PrivateRedisServer {
  readonly port: number;
  readonly url: string;
  /** Starts the server (again) on the same port and waits until it answers PING. */
  start(): Promise<void>;
  /** SIGKILLs the server by PID and waits for it to exit. */
  kill(): Promise<void>;
}

/** A free TCP port on loopback. */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/**
 * Starts a throw-away `redis-server` (no persistence) on a free port. Never use the shared server on
 * 6379 for a test that stops, kills or reconfigures Redis.
 */
export async function startPrivateRedisServer(): Promise<PrivateRedisServer> {
  const port = await freePort();
  let child: ChildProcess | undefined;
  const server: PrivateRedisServer = {
    port,
    url: `redis://127.0.0.1:${port}`,
    async start() {
      child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
        stdio: 'ignore',
      });
      await waitUntilReady(port);
    },
    async kill() {
      const running = child;
      child = undefined;
      if (!running || running.exitCode !== null) return;
      const exited = new Promise((resolve) => running.once('exit', resolve));
      running.kill('SIGKILL');
      await exited;
    },
  };
  await server.start();
  return server;
}

async function waitUntilReady(port: number, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const probe = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    probe.on('error', () => undefined); // refused while the server starts; the loop retries
    try {
      await probe.connect();
      if ((await probe.ping()) === 'PONG') return;
    } catch (error) {
      if (Date.now() > deadline) throw new Error(`redis-server on port ${port} did not start: ${String(error)}`);
    } finally {
      probe.disconnect();
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
