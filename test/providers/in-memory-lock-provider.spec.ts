import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProviderInModule } from './lock-provider-module.acceptance.js';
import { describeLockProvider, type LockProviderFixture } from './lock-provider.acceptance.js';

// The store of an InMemoryLockProvider is the instance itself, so every "node" shares the one instance.
function inMemoryFixture(): LockProviderFixture {
  const store = new InMemoryLockProvider();
  return { connect: () => store, close: async () => undefined };
}

describeLockProvider('InMemoryLockProvider', inMemoryFixture);
describeLockProviderInModule('InMemoryLockProvider', inMemoryFixture);
