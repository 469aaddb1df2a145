import { jest } from '@jest/globals';
import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { TestLockProvider } from '../../lib/testing/index.js';
import { fakeKitClock } from '../support/fake-clock.js';

// The cluster that nest-scheduler-lock/testing simulates: one TestLockProvider, one provider per node. Its locks
// and records read the process's clock: the kit runs on fake timers.
const store = new TestLockProvider();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'TestLockProvider',
  provider: InMemoryLockProvider,
  create: (node = 'test-node') => store.provider(node),
  fencingTokens: true,
  singleUseLocks: true,
  clock: fakeKitClock(),
};

beforeAll(() => jest.useFakeTimers());
afterAll(() => jest.useRealTimers());

describeLockProvider(subject, { describe, it });
