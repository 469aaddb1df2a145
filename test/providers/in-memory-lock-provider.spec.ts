import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { TestLockStore } from '../../lib/testing/index.js';

// Nodes of one in-memory store, each an InMemoryLockProvider with its own lockedBy: the cluster that
// nest-scheduler-lock/testing simulates, so its store passes the kit too.
const store = new TestLockStore();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'InMemoryLockProvider',
  provider: InMemoryLockProvider,
  create: (lockedBy = 'in-memory-node') => store.provider(lockedBy),
  fencingTokens: true,
  singleUseLocks: true,
};

describeLockProvider(subject, { describe, it });
