import { describeLockProvider, type LockProviderSubject } from '../../lib/provider-tests/index.js';
import { MinimalRedisLockProvider } from './minimal-redis-lock-provider.js';
import { redisNodes, SHARED_REDIS } from './redis-subject.js';

const nodes = redisNodes(
  { ...SHARED_REDIS, label: 'minimal-provider' },
  (client, keyPrefix) => new MinimalRedisLockProvider(client, keyPrefix),
);
// No fencing tokens, and lock objects that are not single-use: neither is part of what the library needs.
const subject: LockProviderSubject<MinimalRedisLockProvider> = {
  name: 'MinimalRedisLockProvider',
  provider: MinimalRedisLockProvider,
  ...nodes,
};
afterAll(() => nodes.close());

describeLockProvider(subject, { describe, it });
