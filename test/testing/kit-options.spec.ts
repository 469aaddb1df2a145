import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type ProviderOverrides } from '../../lib/testing/index.js';

/** A builder the options are checked before: any use of it fails the test. */
const builder: ProviderOverrides<never> = {
  overrideProvider: () => {
    throw new Error('the builder was used before the options were checked');
  },
};

describe('TestLockProvider.hold() options', () => {
  const store = new TestLockProvider();
  afterEach(() => store.reset());

  it.each<[string, object, string]>([
    ['a misspelled option', { fro: '1m' }, 'unknown option "fro"; did you mean "for"?'],
    ['an empty node name', { as: '' }, 'as must be a non-empty string (got "")'],
    ['a duration of 0', { for: 0 }, 'for must be greater than 0 (got 0)'],
    ['a duration that is not one', { for: 'a while' }, 'for: Invalid duration "a while"'],
  ])('refuse %s, naming it and the value', async (_, options, problem) => {
    const holding = store.hold('sweep', options);

    await expect(holding).rejects.toThrow(SchedulerLockConfigurationError);
    await expect(holding).rejects.toThrow(`TestLockProvider.hold("sweep") options: ${problem}`);
  });

  it('hold as the node and for the time given', async () => {
    const held = await store.hold('sweep', { as: 'node-9', for: '1m' });

    expect(held.node).toBe('node-9');
  });
});

describe('SchedulerLockTest.override() options', () => {
  it.each<[string, unknown, string]>([
    [
      'a store that is not a TestLockProvider',
      { store: {}, node: 'node-1' },
      'store must be a TestLockProvider (got {})',
    ],
    ['no node', { store: new TestLockProvider() }, 'node is required'],
    ['an empty node', { store: new TestLockProvider(), node: '' }, 'node must be a non-empty string (got "")'],
    [
      'a misspelled option',
      { store: new TestLockProvider(), node: 'node-1', nodee: 'node-2' },
      'unknown option "nodee"; did you mean "node"?',
    ],
  ])('refuse %s, naming it', (_, options, problem) => {
    expect(() => SchedulerLockTest.override(builder, options as never)).toThrow(
      new SchedulerLockConfigurationError(`SchedulerLockTest.override() options: ${problem}`),
    );
  });
});
