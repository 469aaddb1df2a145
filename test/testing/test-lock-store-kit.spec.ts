import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { TestLockStore } from '../../lib/testing/index.js';

// The cluster that nest-scheduler-lock/testing simulates: one TestLockStore, one provider per lockedBy.
const store = new TestLockStore();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'TestLockStore',
  provider: InMemoryLockProvider,
  create: (lockedBy = 'test-node') => store.provider(lockedBy),
  fencingTokens: true,
  singleUseLocks: true,
};

describeLockProvider(subject, { describe, it, concurrent: it.concurrent });
