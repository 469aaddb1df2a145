import { once } from 'node:events';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { settleWithin } from '../support/timing.js';
import { FaultProxy } from './fault-proxy.js';

/** The chaos soak's fault-injecting proxy, in front of an echo server on loopback. */

let echo: Server;
let proxy: FaultProxy;
const clients: Socket[] = [];
/** The echo server's side of every connection the proxy made. */
const echoSockets: Socket[] = [];

beforeEach(async () => {
  echoSockets.length = 0;
  echo = createServer((socket) => {
    echoSockets.push(socket);
    socket.on('error', () => undefined);
    socket.pipe(socket);
  });
  await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
  proxy = await FaultProxy.start((echo.address() as { port: number }).port);
});

afterEach(async () => {
  for (const client of clients.splice(0)) client.destroy();
  await proxy.close();
  await new Promise<void>((resolve) => echo.close(() => resolve()));
});

async function connectThroughProxy(): Promise<Socket> {
  const client = connect(proxy.port, '127.0.0.1');
  clients.push(client);
  client.on('error', () => undefined);
  await once(client, 'connect');
  return client;
}

/** The next bytes the socket receives; never settles if it receives none (`events.once` would reject on a reset). */
function nextData(socket: Socket): Promise<string> {
  return new Promise((resolve) => socket.once('data', (chunk) => resolve(String(chunk))));
}

/** Writes `text` and resolves with what comes back: through a forwarding proxy, the echo of it. */
function roundTrip(socket: Socket, text: string): Promise<string> {
  const reply = nextData(socket);
  socket.write(text);
  return reply;
}

/** Resolves with the error code (or `closed`) when the socket closes. */
function closed(socket: Socket): Promise<string> {
  let code = 'closed';
  socket.on('error', (error: NodeJS.ErrnoException) => (code = error.code ?? code));
  return new Promise((resolve) => socket.once('close', () => resolve(code)));
}

describe('FaultProxy', () => {
  it('forwards both ways', async () => {
    const client = await connectThroughProxy();
    expect(await roundTrip(client, 'ping')).toBe('ping');
  });

  it('stall: holds the bytes on an open connection and delivers them when forwarding resumes', async () => {
    const client = await connectThroughProxy();
    proxy.setMode('stall');
    const reply = nextData(client);
    client.write('held');

    expect((await settleWithin(reply, 300)).status).toBe('pending');
    expect(client.destroyed).toBe(false);

    proxy.setMode('forward');
    expect(await reply).toBe('held');
  });

  it('black-hole: drops the bytes, then resets the connection that lost them; new connections work again', async () => {
    const client = await connectThroughProxy();
    proxy.setMode('black-hole');
    const reply = nextData(client);
    const ended = closed(client);
    client.write('lost');

    expect((await settleWithin(reply, 300)).status).toBe('pending');

    proxy.setMode('forward');
    expect(await ended).toBe('ECONNRESET');

    expect(await roundTrip(await connectThroughProxy(), 'again')).toBe('again');
  });

  it('reset: resets open connections and every new one until forwarding resumes', async () => {
    const client = await connectThroughProxy();
    const ended = closed(client);

    proxy.setMode('reset');
    expect(await ended).toBe('ECONNRESET');

    const refused = connect(proxy.port, '127.0.0.1');
    clients.push(refused);
    expect(await closed(refused)).toBe('ECONNRESET');

    proxy.setMode('forward');
    expect(await roundTrip(await connectThroughProxy(), 'back')).toBe('back');
  });

  it('closes the client side when the upstream server drops the connection (Redis killed)', async () => {
    const client = await connectThroughProxy();
    await roundTrip(client, 'ping'); // the proxy's upstream connection is open
    const ended = closed(client);
    for (const socket of echoSockets) socket.destroy();

    expect(await ended).toBe('closed');
  });
});
