import type { PgBouncerSetup } from '../support/private-pgbouncer.js';
import { describePgBouncerMode } from './pgbouncer-modes.js';

// A PgBouncer of 1.21 or later, named by PGBOUNCER_PREPARED_BIN, keeps the provider's named statements; when that
// variable is set, the binary must be there and be one. The mode without them: postgres-pgbouncer.spec.ts.
const PREPARED_BIN = process.env.PGBOUNCER_PREPARED_BIN;
const PREPARED: PgBouncerSetup | null = PREPARED_BIN ? { bin: PREPARED_BIN, maxPreparedStatements: 100 } : null;

describePgBouncerMode('with prepared statements (PGBOUNCER_PREPARED_BIN, max_prepared_statements = 100)', PREPARED);
