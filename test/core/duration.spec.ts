import { formatDuration, parseDuration } from '../../lib/core/provider/duration.js';

describe('parseDuration', () => {
  it.each([
    [250, 250],
    ['250', 250],
    ['500ms', 500],
    ['30s', 30_000],
    ['5m', 300_000],
    ['2h', 7_200_000],
    ['1d', 86_400_000],
    ['1h30m', 5_400_000],
    ['1m30s500ms', 90_500],
    [' 10S ', 10_000],
    ['PT30S', 30_000],
    ['PT1H30M', 5_400_000],
    ['P1D', 86_400_000],
    ['P1DT2H', 93_600_000],
    ['PT0.5S', 500],
  ])('parses %p as %p ms', (input, expected) => {
    expect(parseDuration(input)).toBe(expected);
  });

  it.each(['', 'abc', '10 minutes', '5x', 'P', 'PT', 'PT5', '1h 30m', 'ms'])('rejects %p, quoting it', (input) => {
    expect(() => parseDuration(input)).toThrow(`Invalid duration "${input}"`);
  });

  it.each([-1, '-5s', '-PT1S'])('rejects negative %p', (input) => {
    expect(() => parseDuration(input)).toThrow(/must not be negative/);
  });

  it.each([NaN, Infinity])('rejects %p', (input) => {
    expect(() => parseDuration(input)).toThrow(/not a finite number/);
  });
});

describe('formatDuration', () => {
  it.each([
    [0, '0ms'],
    [500, '500ms'],
    [90_000, '1m30s'],
    [5_400_000, '1h30m'],
    [86_400_000, '1d'],
  ])('formats %p ms as %p', (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
    expect(parseDuration(text)).toBe(ms);
  });
});
