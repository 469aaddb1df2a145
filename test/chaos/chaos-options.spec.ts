import { parseChaosOptions, skewsFor } from './chaos-options.js';

describe('npm run chaos options', () => {
  it('reads flags before the environment, minutes or seconds', () => {
    expect(parseChaosOptions(['--seed', '1234', '--minutes=2', '--apps', '3'], { CHAOS_SEED: '9' })).toMatchObject({
      seed: 1234,
      seconds: 120,
      apps: 3,
    });
    expect(parseChaosOptions([], { CHAOS_SEED: '9', CHAOS_SECONDS: '75' })).toMatchObject({
      seed: 9,
      seconds: 75,
      apps: 5,
      store: 'redis',
    });
    expect(parseChaosOptions(['--store', 'postgres'], { CHAOS_STORE: 'redis' }).store).toBe('postgres');
    expect(parseChaosOptions([], {}).seconds).toBe(600);
  });

  it('rejects bad values, naming the option and the value', () => {
    expect(() => parseChaosOptions(['--apps', '1'], {})).toThrow(
      /--apps must be a whole number from 2 to 9 \(got "1"\)/,
    );
    expect(() => parseChaosOptions(['--seed', 'abc'], {})).toThrow(/--seed must be a whole number .* \(got "abc"\)/);
    expect(() => parseChaosOptions(['--minutes', '1', '--seconds', '5'], {})).toThrow(
      /--minutes or --seconds, not both/,
    );
    expect(() => parseChaosOptions(['--speed', '5'], {})).toThrow(/Unknown option\(s\) --speed/);
    expect(() => parseChaosOptions(['--store', 'mysql'], {})).toThrow(
      /--store must be one of redis, postgres \(got "mysql"\)/,
    );
  });

  it('spreads whole-second skews from -4 s to +4 s', () => {
    expect(skewsFor(5)).toEqual([-4000, -2000, 0, 2000, 4000]);
    expect(skewsFor(3)).toEqual([-4000, 0, 4000]);
  });
});
