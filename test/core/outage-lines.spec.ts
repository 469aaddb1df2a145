import { afterEach, beforeEach, describe, expect, it, jest } from '@jest/globals';
import { OUTAGE_MS, OutageLines } from '../../lib/core/provider/outage-lines.js';

/** The lines of a store's outages, as the node's logger would print them. */
function linesOf(): { lines: OutageLines; printed: string[] } {
  const printed: string[] = [];
  const log = (level: string) => (message: string) => void printed.push(`${level} ${message}`);
  const lines = new OutageLines('Store 10.0.0.5:1', { log: log('LOG'), warn: log('WARN'), error: log('ERROR') });
  lines.start(() => 2);
  return { lines, printed };
}

/** An outage that is reported and ends. */
function outage(lines: OutageLines): void {
  lines.began();
  lines.causedBy('connection refused');
  lines.failed();
  lines.report();
  lines.back();
}

describe('OutageLines', () => {
  it('gives one line when the store goes, one when it is back, however many calls fail meanwhile', () => {
    const { lines, printed } = linesOf();

    lines.began();
    for (let call = 0; call < 5; call++) {
      lines.causedBy('connection refused');
      lines.failed();
      lines.report();
    }
    lines.back();

    expect(printed).toEqual([
      'ERROR Store 10.0.0.5:1 is unreachable (connection refused): locked ticks are skipped until it is back; 2 locked jobs affected',
      expect.stringMatching(/^LOG Store 10\.0\.0\.5:1 is reachable again after \d+\.\ds; locked ticks run again$/),
    ]);
  });

  it('takes a call sent before the store was back, failing after it, for the outage that ended', () => {
    const { lines } = linesOf();
    const sentDuringOutage = performance.now();
    outage(lines);
    const sentAfter = performance.now() + 1;

    expect(lines.ended(sentDuringOutage)).toBe(true);
    expect(lines.ended(sentAfter)).toBe(false);
    expect(lines.ended(undefined)).toBe(false); // a caller that does not say when it sent its call
  });

  it('takes no call for an ended outage while another is under way, nor before any outage', () => {
    const { lines } = linesOf();
    expect(lines.ended(performance.now())).toBe(false);

    const sentDuringFirst = performance.now();
    outage(lines);
    lines.began();

    expect(lines.ended(sentDuringFirst)).toBe(false);
  });

  it('reports a store that leaves a call unanswered only once a call sent after that one goes unanswered too', () => {
    const { lines, printed } = linesOf();
    const firstSent = performance.now();
    const sentWithFirst = performance.now();

    lines.unanswered('no answer within 300ms', firstSent);
    lines.unanswered('no answer within 300ms', sentWithFirst); // the same slow moment: no confirmation
    expect(printed).toEqual([]);

    lines.unanswered('no answer within 300ms', performance.now() + 1);
    lines.back();

    expect(printed).toEqual([
      'ERROR Store 10.0.0.5:1 is unreachable (no answer within 300ms): locked ticks are skipped until it is back; 2 locked jobs affected',
      expect.stringMatching(/^LOG Store 10\.0\.0\.5:1 is reachable again after \d+\.\ds; locked ticks run again$/),
    ]);
  });

  it('takes one slow answer for no outage: a warning once the store answers, timed from when the call was sent', () => {
    const { lines, printed } = linesOf();

    lines.unanswered('no answer within 300ms', performance.now() - 300);
    lines.back();

    expect(printed).toEqual([
      expect.stringMatching(
        /^WARN Store 10\.0\.0\.5:1: unreachable for 0\.[3-9]s, now back; 1 call to it failed meanwhile \(skipped\)$/,
      ),
    ]);
  });

  it('asks a new confirmation after the store was back', () => {
    const { lines, printed } = linesOf();
    lines.unanswered('no answer within 300ms', performance.now());
    lines.back();
    printed.length = 0;

    lines.unanswered('no answer within 300ms', performance.now() + 1);

    expect(printed).toEqual([]);
  });
});

describe('OutageLines, the rule for a store that fails calls without saying why (fake time)', () => {
  beforeEach(() => {
    jest.useFakeTimers({ now: 0 });
  });
  afterEach(() => {
    jest.useRealTimers();
  });

  /** Moves the clock to `ms` after the start. */
  const at = (ms: number) => jest.advanceTimersByTime(ms - performance.now());
  const DEADLINE = 'no answer within 2s';
  const ERROR_LINE =
    'ERROR Store 10.0.0.5:1 is unreachable (no answer within 2s): locked ticks are skipped until it is back; 2 locked jobs affected';

  it('reports 30 calls sent over 1.6 s, each unanswered at its 2 s deadline, once one fails 3 s in', () => {
    const { lines, printed } = linesOf();
    const sent = Array.from({ length: 30 }, (_, i) => 1_000 + i * 55); // all before the first failure is seen
    for (const sentAt of sent) {
      at(sentAt + 2_000);
      lines.unanswered(DEADLINE, sentAt);
      if (sentAt + 2_000 - sent[0] < OUTAGE_MS) expect(printed).toEqual([]);
    }
    at(4_700);
    lines.back();

    expect(printed).toEqual([ERROR_LINE, 'LOG Store 10.0.0.5:1 is reachable again after 3.7s; locked ticks run again']);
  });

  it('gives a warning, no error line, for calls of one slow moment that fail just short of 3 s in', () => {
    const { lines, printed } = linesOf();
    for (const sentAt of [1_000, 1_400, 1_999]) {
      at(sentAt + 2_000);
      lines.unanswered(DEADLINE, sentAt);
    }
    at(4_200);
    lines.back();

    expect(printed).toEqual([
      'WARN Store 10.0.0.5:1: unreachable for 3.2s, now back; 3 calls to it failed meanwhile (skipped)',
    ]);
  });

  it('reports a lost connection whose calls fail at once, no reconnection failing, once it has lasted 3 s', () => {
    const { lines, printed } = linesOf();
    at(500);
    lines.began(); // the connection closed
    for (const failedAt of [600, 1_500, 3_499]) {
      at(failedAt);
      lines.failedFor('not connected');
    }
    expect(printed).toEqual([]);

    at(3_500);
    lines.failedFor('not connected');

    expect(printed).toEqual([
      'ERROR Store 10.0.0.5:1 is unreachable (not connected): locked ticks are skipped until it is back; 2 locked jobs affected',
    ]);
  });

  it("names the cause a failed reconnection gave, not the calls' reason, however long the calls failed", () => {
    const { lines, printed } = linesOf();
    lines.began();
    at(1_000);
    lines.failedFor('not connected');
    lines.causedBy('connection refused');
    at(4_000);
    lines.failedFor('not connected');

    expect(printed).toEqual([expect.stringContaining('is unreachable (connection refused)')]);
  });
});
