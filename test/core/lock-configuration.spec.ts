import {
  createLockConfiguration,
  DEFAULT_LEASE,
  SchedulerLockConfigurationError,
  type LockDefaults,
  type LockDurations,
} from '../../lib/core/provider/lock-configuration.js';

const DEFAULTS: LockDefaults = { lockAtMostFor: 60_000, lockAtLeastFor: 1_000 };
const SUBJECT = 'job "Reports.daily"';

/** The error `createLockConfiguration` throws for these inputs, failing the test if it throws none. */
function configurationError(
  name: string | undefined,
  durations: LockDurations,
  defaults = DEFAULTS,
  subject?: string,
): Error {
  try {
    createLockConfiguration(name, durations, defaults, subject);
  } catch (error) {
    expect(error).toBeInstanceOf(SchedulerLockConfigurationError);
    return error as Error;
  }
  throw new Error(`expected ${JSON.stringify({ name, durations })} to be rejected`);
}

describe('createLockConfiguration', () => {
  it('parses the durations a user writes into milliseconds', () => {
    expect(createLockConfiguration('report', { lockAtMostFor: '5m', lockAtLeastFor: 'PT30S' }, DEFAULTS)).toEqual({
      name: 'report',
      lockAtMostFor: 300_000,
      lockAtLeastFor: 30_000,
    });
  });

  it.each<[string, LockDurations, { lockAtMostFor: number; lockAtLeastFor: number }]>([
    ['no durations', {}, { lockAtMostFor: DEFAULTS.lockAtMostFor, lockAtLeastFor: DEFAULTS.lockAtLeastFor }],
    [
      'only lockAtMostFor',
      { lockAtMostFor: '10s' },
      { lockAtMostFor: 10_000, lockAtLeastFor: DEFAULTS.lockAtLeastFor },
    ],
    [
      'only lockAtLeastFor',
      { lockAtLeastFor: 2_000 },
      { lockAtMostFor: DEFAULTS.lockAtMostFor, lockAtLeastFor: 2_000 },
    ],
    [
      'an explicit lockAtLeastFor of 0',
      { lockAtLeastFor: 0 },
      { lockAtMostFor: DEFAULTS.lockAtMostFor, lockAtLeastFor: 0 },
    ],
    [
      'lockAtLeastFor equal to lockAtMostFor',
      { lockAtMostFor: '2s', lockAtLeastFor: 2_000 },
      { lockAtMostFor: 2_000, lockAtLeastFor: 2_000 },
    ],
  ])('takes the defaults for what is not set (%s)', (_case, durations, expected) => {
    expect(createLockConfiguration('report', durations, DEFAULTS)).toEqual({ name: 'report', ...expected });
  });

  it.each<[string, LockDurations, LockDefaults, number | undefined]>([
    ['no lease by default', {}, DEFAULTS, undefined],
    ["the defaults' lease", {}, { ...DEFAULTS, lease: 5_000 }, 5_000],
    ['keepAlive: true', { keepAlive: true }, DEFAULTS, DEFAULT_LEASE],
    ['keepAlive: { lease }', { keepAlive: { lease: '2s' } }, DEFAULTS, 2_000],
    ["keepAlive: false over the defaults' lease", { keepAlive: false }, { ...DEFAULTS, lease: 5_000 }, undefined],
  ])('resolves the keepAlive lease: %s', (_case, durations, defaults, lease) => {
    expect(createLockConfiguration('report', durations, defaults).lease).toBe(lease);
  });

  it.each<[string, string | undefined, string]>([
    ['an empty', '', '""'],
    ['a blank', '   ', '"   "'],
    ['a missing', undefined, 'undefined'],
  ])('rejects %s name, naming the subject and the value', (_case, name, quoted) => {
    const { message } = configurationError(name, {}, DEFAULTS, SUBJECT);
    expect(message).toContain(SUBJECT);
    expect(message).toContain('name');
    expect(message).toContain(quoted);
  });

  it.each<[string, LockDurations, string[]]>([
    ['an unparsable lockAtMostFor', { lockAtMostFor: 'ten minutes' as never }, ['lockAtMostFor', '"ten minutes"']],
    ['an unparsable lockAtLeastFor', { lockAtLeastFor: '5 s' as never }, ['lockAtLeastFor', '"5 s"']],
    ['a negative lockAtMostFor', { lockAtMostFor: -1 }, ['lockAtMostFor', '-1']],
    ['a negative lockAtLeastFor', { lockAtLeastFor: '-5s' }, ['lockAtLeastFor', '"-5s"']],
    ['a lockAtMostFor of 0', { lockAtMostFor: '0s', lockAtLeastFor: 0 }, ['lockAtMostFor', '"0s"']],
    ['an infinite lockAtMostFor', { lockAtMostFor: Infinity }, ['lockAtMostFor', 'Infinity']],
    [
      'lockAtLeastFor > lockAtMostFor',
      { lockAtMostFor: '1s', lockAtLeastFor: '5s' },
      ['lockAtLeastFor', '5000', 'lockAtMostFor', '1000'],
    ],
    [
      'a default lockAtLeastFor > lockAtMostFor',
      { lockAtMostFor: 500 },
      ['lockAtLeastFor', String(DEFAULTS.lockAtLeastFor), '500'],
    ],
    ['a keepAlive that is not true, false or { lease }', { keepAlive: 'yes' as never }, ['keepAlive', '"yes"']],
    ['a keepAlive lease of 0', { keepAlive: { lease: 0 } }, ['keepAlive.lease', '0']],
    ['an unparsable keepAlive lease', { keepAlive: { lease: 'soon' as never } }, ['keepAlive.lease', '"soon"']],
  ])('rejects %s, naming the subject, the option and the value', (_case, durations, quoted) => {
    const { message } = configurationError('report', durations, DEFAULTS, SUBJECT);
    expect(message).toContain(SUBJECT);
    for (const text of quoted) expect(message).toContain(text);
  });

  it('names the lock as the subject when no subject is given', () => {
    const { message } = configurationError('nightly-export', { lockAtMostFor: 'soon' as never });
    expect(message).toContain('lock "nightly-export"');
  });
});
