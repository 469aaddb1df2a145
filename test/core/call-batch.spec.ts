import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { CallBatch } from '../../lib/core/provider/call-batch.js';

/*
 * When a batch goes depends on how long the turn of its first call took, read on `performance.now()`. The
 * clock is the test's: how long a turn "took" is set here, not left to the machine's load (a GC pause on a
 * busy CI runner once made a quick turn look long).
 */
let now = 0;
let batches: number[][];
let batch: CallBatch<number, string>;

beforeEach(() => {
  now = 0;
  batches = [];
  jest.spyOn(performance, 'now').mockImplementation(() => now);
  batch = new CallBatch<number, string>(async (requests) => {
    batches.push([...requests]);
    return requests.map((request) => `reply ${request}`);
  });
});
afterEach(() => {
  jest.restoreAllMocks();
});

/** Resolves after the check phases of `turns` turns of the event loop. */
const afterTurns = (turns: number): Promise<void> =>
  new Promise((resolve) => (turns === 0 ? resolve() : setImmediate(() => void afterTurns(turns - 1).then(resolve))));

describe('CallBatch', () => {
  it("sends a quick turn's calls at its end, each with its own reply, without waiting for more", async () => {
    const first = [batch.call(1), batch.call(2)];
    // Two turns later: had the batch waited for more of its burst, this call would have joined it.
    await afterTurns(2);
    const later = batch.call(3);

    expect(await Promise.all([...first, later])).toEqual(['reply 1', 'reply 2', 'reply 3']);
    expect(batches).toEqual([[1, 2], [3]]);
  });

  it('after a long turn, waits for the calls of the timers phases that follow, until a quiet gap', async () => {
    const replies = new Promise<string[]>((resolve) => {
      const first = batch.call(1);
      // Due before the quiet wait's own timer, which is armed once this turn ends: it fires first.
      setTimeout(() => resolve(Promise.all([first, batch.call(2)])), 1);
      now += 20; // this turn ran 20 ms: the rest of the burst comes due meanwhile
    });

    expect(await replies).toEqual(['reply 1', 'reply 2']);
    expect(batches).toEqual([[1, 2]]);
  });

  it('sends a burst that never goes quiet once 100 ms have passed since its first turn', async () => {
    const sentAt: number[] = [];
    const timed = new CallBatch<number, number>(async (requests) => {
      sentAt.push(now);
      return requests;
    });
    const first = timed.call(1);
    now += 20; // a long turn: the batch waits for the rest of its burst from now on
    let next = 2;
    // A call in every timers phase, each 30 ms later on the batch's clock: the burst never goes quiet.
    const keepCalling = setInterval(() => {
      now += 30;
      void timed.call(next++);
    }, 1);
    await first;
    clearInterval(keepCalling);

    // It waited while calls kept coming, and went at its first look past 100 ms after the long turn.
    expect(sentAt[0]).toBeGreaterThanOrEqual(20 + 100);
  });

  it('sends every call at once, by itself, when the store cannot take them together', async () => {
    const alone = new CallBatch<number, string>(
      async (requests) => {
        batches.push([...requests]);
        return requests.map(String);
      },
      () => true,
    );

    expect(await Promise.all([alone.call(1), alone.call(2)])).toEqual(['1', '2']);
    expect(batches).toEqual([[1], [2]]);
  });

  it("rejects every call of a batch whose store call failed, after each call's onFailure saw it", async () => {
    const failing = new CallBatch<number, string>(() => Promise.reject(new Error('store down')));
    const seen: unknown[] = [];
    const calls = [failing.call(1, (e) => seen.push(e)), failing.call(2, (e) => seen.push(e))];

    for (const call of calls) await expect(call).rejects.toThrow('store down');
    expect(seen).toHaveLength(2);
  });
});
