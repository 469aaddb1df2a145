import { jest } from '@jest/globals';
import { FaultLog } from '../../lib/core/executor/fault-log.js';
import type { SchedulerLockLogger } from '../../lib/core/executor/logger.js';

/** A logger that keeps its error lines. */
function errorLines(): SchedulerLockLogger & { lines: string[] } {
  const lines: string[] = [];
  return {
    lines,
    log: () => undefined,
    warn: () => undefined,
    debug: () => undefined,
    error: (message) => void lines.push(String(message)),
  };
}

describe('FaultLog', () => {
  afterEach(() => jest.useRealTimers());

  it('logs a recurring fault once per interval per key, then says how many were held back', () => {
    jest.useFakeTimers();
    const logger = errorLines();
    const faults = new FaultLog(logger, undefined, 50);
    for (let i = 0; i < 10; i++) faults.error('report', 'Redis is down');
    faults.error('billing', 'Redis is down');
    expect(logger.lines).toEqual(['Redis is down', 'Redis is down']);
    jest.advanceTimersByTime(49);
    faults.error('report', 'Redis is down');
    expect(logger.lines).toHaveLength(2); // still within the interval
    jest.advanceTimersByTime(1);
    faults.error('report', 'Redis is down');
    expect(logger.lines.at(-1)).toBe('Redis is down (10 more since the last report)');
  });

  it('reports a fault again at once after it was cleared', () => {
    const logger = errorLines();
    const faults = new FaultLog(logger, undefined, 60_000);
    faults.error('report', 'down');
    faults.clear('report');
    faults.error('report', 'down again');
    expect(logger.lines).toEqual(['down', 'down again']);
  });

  it('forgets the oldest keys beyond 1,000, so per-item lock names do not grow it without bound', () => {
    const logger = errorLines();
    const faults = new FaultLog(logger, undefined, 60_000);
    for (let i = 0; i <= 1_000; i++) faults.error(`customer-${i}`, `fault ${i}`);
    expect(logger.lines).toHaveLength(1_001);
    faults.error('customer-0', 'fault 0 again'); // forgotten: logged again at once
    faults.error('customer-1000', 'fault 1000 again'); // remembered: held back
    expect(logger.lines.slice(-1)).toEqual(['fault 0 again']);
  });
});
