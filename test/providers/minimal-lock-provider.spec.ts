import { describeLockProviderInModule } from './lock-provider-module.acceptance.js';
import { describeLockProvider } from './lock-provider.acceptance.js';
import { MinimalRedisLockProvider } from './minimal-redis-lock-provider.js';
import { sharedRedisFixture } from './shared-redis-fixture.js';

const minimalProviderFixture = () =>
  sharedRedisFixture('minimal-provider', (client, keyPrefix) => new MinimalRedisLockProvider(client, keyPrefix));

// No fencing tokens, and lock objects that are not single-use: neither is part of what the library needs.
describeLockProvider('MinimalRedisLockProvider', minimalProviderFixture, { fencing: false, singleUse: false });
describeLockProviderInModule('MinimalRedisLockProvider', minimalProviderFixture);
