import type { PgBouncerSetup } from '../support/private-pgbouncer.js';
import { describePgBouncerMode } from './pgbouncer-modes.js';

// Debian 12's PgBouncer 1.18 has no prepared statements (`max_prepared_statements` came in 1.21): the provider's
// named statements must fall back to unnamed ones. The mode with them: postgres-pgbouncer-prepared.spec.ts.
const DEBIAN_PGBOUNCER: PgBouncerSetup = { bin: '/usr/sbin/pgbouncer', maxPreparedStatements: 0 };

describePgBouncerMode('without prepared statements (Debian 12: PgBouncer 1.18)', DEBIAN_PGBOUNCER);
