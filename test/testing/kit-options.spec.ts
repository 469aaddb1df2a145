import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { SchedulerLockTest, TestLockStore, type ProviderOverrides } from '../../lib/testing/index.js';

/** A builder the options are checked before: any use of it fails the test. */
const builder: ProviderOverrides<never> = {
  overrideProvider: () => {
    throw new Error('the builder was used before the options were checked');
  },
};

describe('TestLockStore.hold() options', () => {
  const store = new TestLockStore();
  afterEach(() => store.reset());

  it.each<[string, object, string]>([
    ['a misspelled option', { fro: '1m' }, 'unknown option "fro"; did you mean "for"?'],
    ['an empty node name', { as: '' }, 'as must be a non-empty string (got "")'],
    ['a duration of 0', { for: 0 }, 'for must be greater than 0 (got 0)'],
    ['a duration that is not one', { for: 'a while' }, 'for: Invalid duration "a while"'],
  ])('refuse %s, naming it and the value', async (_, options, problem) => {
    const holding = store.hold('sweep', options);

    await expect(holding).rejects.toThrow(SchedulerLockConfigurationError);
    await expect(holding).rejects.toThrow(`TestLockStore.hold("sweep") options: ${problem}`);
  });

  it('hold as the node and for the time given', async () => {
    const held = await store.hold('sweep', { as: 'node-9', for: '1m' });

    expect(held.lockedBy).toBe('node-9');
  });
});

describe('SchedulerLockTest.override() options', () => {
  it.each<[string, unknown, string]>([
    [
      'a store that is not a TestLockStore',
      { store: {}, lockedBy: 'node-1' },
      'store must be a TestLockStore (got {})',
    ],
    ['no lockedBy', { store: new TestLockStore() }, 'lockedBy is required'],
    ['an empty lockedBy', { store: new TestLockStore(), lockedBy: '' }, 'lockedBy must be a non-empty string (got "")'],
    [
      'a misspelled option',
      { store: new TestLockStore(), lockedBy: 'node-1', lockedby: 'node-2' },
      'unknown option "lockedby"; did you mean "lockedBy"?',
    ],
  ])('refuse %s, naming it', (_, options, problem) => {
    expect(() => SchedulerLockTest.override(builder, options as never)).toThrow(
      new SchedulerLockConfigurationError(`SchedulerLockTest.override() options: ${problem}`),
    );
  });
});
