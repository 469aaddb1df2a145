import { InMemoryLockProvider } from '../../lib/index.js';
import { describeLockProvider } from './lock-provider.acceptance.js';

// The store of an InMemoryLockProvider is the instance itself, so every "node" shares the one instance.
describeLockProvider('InMemoryLockProvider', () => {
  const store = new InMemoryLockProvider();
  return { connect: () => store, close: async () => undefined };
});
