import { describe, expect, it } from '@jest/globals';
import { OutageLines } from '../../lib/core/provider/outage-lines.js';

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
  lines.cause = 'connection refused';
  lines.failed();
  lines.report();
  lines.back();
}

describe('OutageLines', () => {
  it('gives one line when the store goes, one when it is back, however many calls fail meanwhile', () => {
    const { lines, printed } = linesOf();

    lines.began();
    for (let call = 0; call < 5; call++) {
      lines.cause ??= 'connection refused';
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
