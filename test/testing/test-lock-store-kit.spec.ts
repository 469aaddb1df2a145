import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { TestLockProvider } from '../../lib/testing/index.js';

// The cluster that nest-scheduler-lock/testing simulates: one TestLockProvider, one provider per node.
const store = new TestLockProvider();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'TestLockProvider',
  provider: InMemoryLockProvider,
  create: (node = 'test-node') => store.provider(node),
  fencingTokens: true,
  singleUseLocks: true,
};

describeLockProvider(subject, { describe, it, concurrent: it.concurrent });
