import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { TestLockProvider } from '../../lib/testing/index.js';

// Nodes of one in-memory store, each an InMemoryLockProvider with its own node: the cluster that
// nest-scheduler-lock/testing simulates, so its store passes the kit too.
const store = new TestLockProvider();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'InMemoryLockProvider',
  provider: InMemoryLockProvider,
  create: (node = 'in-memory-node') => store.provider(node),
  fencingTokens: true,
  singleUseLocks: true,
};

describeLockProvider(subject, { describe, it });
