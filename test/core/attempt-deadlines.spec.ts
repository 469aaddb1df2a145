import { jest } from '@jest/globals';
import { once } from 'node:events';
import { createServer, connect, type Server, type Socket } from 'node:net';
import { AttemptDeadlines } from '../../lib/core/executor/attempt-deadlines.js';
import { LockProviderUnavailableError } from '../../lib/core/provider/errors.js';
import { blockFor } from '../support/timing.js';

describe('AttemptDeadlines', () => {
  it('takes an answer that arrived in time but was read late, because the event loop was blocked', async () => {
    // Real time and a loopback socket in this process: the subject is the order of Node's event loop phases.
    const { server, near, far } = await socketPair();
    try {
      const deadlines = new AttemptDeadlines(100);
      const late = jest.fn();
      const answer = once(near, 'data').then(([data]) => String(data));
      const attempt = deadlines.within(answer, late);
      // The answer lands in the socket at once, as a store's does; the deadline passes before Node reads it.
      far.write('PONG');
      blockFor(400);
      await expect(attempt).resolves.toBe('PONG');
      expect(late).not.toHaveBeenCalled();
    } finally {
      near.destroy();
      far.destroy();
      server.close();
    }
  });

  it('times out an attempt left unanswered, and hands its late answer over', async () => {
    jest.useFakeTimers();
    try {
      const deadlines = new AttemptDeadlines(50);
      let answer!: (value: string) => void;
      const late = jest.fn();
      const attempt = deadlines.within(new Promise<string>((resolve) => (answer = resolve)), late);
      const outcome = expect(attempt).rejects.toThrow(LockProviderUnavailableError);
      await jest.advanceTimersByTimeAsync(49);
      expect(late).not.toHaveBeenCalled();
      await jest.advanceTimersByTimeAsync(50);
      await outcome;
      answer('too late');
      await Promise.resolve();
      expect(late).toHaveBeenCalledWith('too late');
    } finally {
      jest.useRealTimers();
    }
  });
});

/** Both ends of a loopback TCP connection within this process. */
async function socketPair(): Promise<{ server: Server; near: Socket; far: Socket }> {
  const server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as { port: number };
  const accepted = once(server, 'connection');
  const near = connect(port, '127.0.0.1');
  const [[far]] = await Promise.all([accepted as Promise<[Socket]>, once(near, 'connect')]);
  return { server, near, far };
}
