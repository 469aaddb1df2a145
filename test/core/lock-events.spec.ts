import { config } from 'rxjs';
import { InMemoryLockProvider, LockEvents, LockingTaskExecutor } from '../../lib/index.js';
import { waitUntil } from '../support/wait-until.js';

describe('LockEvents subscribers', () => {
  const reported: unknown[] = [];
  let previous: typeof config.onUnhandledError;

  beforeEach(() => {
    // rxjs reports a subscriber's exception asynchronously through this hook (by default it rethrows).
    previous = config.onUnhandledError;
    config.onUnhandledError = (error) => reported.push(error);
  });

  afterEach(() => {
    config.onUnhandledError = previous;
    reported.length = 0;
  });

  it('never break a run: a subscriber that throws on every event leaves the task result and the release intact', async () => {
    const provider = new InMemoryLockProvider();
    const events = new LockEvents();
    const executor = new LockingTaskExecutor(provider, { node: 'node-a', events });
    const seen: string[] = [];
    const throwing = events.events$.subscribe((event) => {
      seen.push(event.type);
      throw new Error(`subscriber failed on ${event.type}`);
    });

    const result = await executor.executeWithLock(() => 'report', { name: 'report' });
    const sequence = ['attempt', 'acquired', 'started', 'finished', 'released'];
    await waitUntil(() => reported.length === sequence.length, 'rxjs reported each exception (on a later turn)');

    expect(result).toEqual({ executed: true, result: 'report' });
    expect((await provider.operatorProvider().lockState('report')).holder).toBeNull(); // released
    // The subscriber stays subscribed and sees every event; rxjs reports each of its exceptions.
    expect(seen).toEqual(sequence);
    expect(reported).toEqual(
      sequence.map((type) => expect.objectContaining({ message: `subscriber failed on ${type}` })),
    );
    // Other subscribers, and later runs, are unaffected.
    throwing.unsubscribe();
    const later: string[] = [];
    events.events$.subscribe((event) => later.push(event.type));
    await executor.executeWithLock(() => undefined, { name: 'report' });
    expect(later).toEqual(['attempt', 'acquired', 'started', 'finished', 'released']);
  });
});
