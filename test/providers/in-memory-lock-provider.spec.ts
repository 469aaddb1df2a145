import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';

// The store of an InMemoryLockProvider is the instance itself, so every "node" is the one instance.
const store = new InMemoryLockProvider();
const subject: LockProviderSubject<InMemoryLockProvider> = {
  name: 'InMemoryLockProvider',
  provider: InMemoryLockProvider,
  create: () => store,
  fencingTokens: true,
  singleUseLocks: true,
};

describeLockProvider(subject, { describe, it });
