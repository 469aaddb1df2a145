import { jest } from '@jest/globals';
import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { InMemoryStore } from '../../lib/providers/in-memory/in-memory-store.js';
import { fakeKitClock } from '../support/fake-clock.js';

// Nodes of one in-memory store, each an InMemoryLockProvider with its own node (the store option is how
// providers share a store in one process). The store reads the process's clock: the kit runs on fake timers.
const store = new InMemoryStore();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'InMemoryLockProvider',
  provider: InMemoryLockProvider,
  create: (node = 'in-memory-node') => new InMemoryLockProvider({ node, store }),
  fencingTokens: true,
  singleUseLocks: true,
  clock: fakeKitClock(),
};

beforeAll(() => jest.useFakeTimers());
afterAll(() => jest.useRealTimers());

describeLockProvider(subject, { describe, it });
