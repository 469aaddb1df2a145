import { describeLockProviderInModule } from '../providers/lock-provider-module.acceptance.js';
import { describeLockProvider } from '../providers/lock-provider.acceptance.js';
import { postgresFixture } from './postgres-fixture.js';

describeLockProvider('PostgresLockProvider', () => postgresFixture('acceptance'));
describeLockProviderInModule('PostgresLockProvider', () => postgresFixture('acceptance-module'));
