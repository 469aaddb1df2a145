import { readdirSync } from 'node:fs';

/**
 * The three tiers of the suite, by spec path: each spec is in exactly one. A spec listed in FILE_TIERS is in its
 * listed tier; any other is in its folder's tier, and specs of folders not listed (new ones too) are integration.
 * - unit: no server, no build, no child process; fake time. Runs in a fresh clone with no Redis or PostgreSQL.
 * - integration: the shared Redis and PostgreSQL, in one process; waits on events or conditions, never a fixed one.
 * - system: private servers, several processes, a browser, the built package (dist/, .build/), or a fixed wait for
 *   real time to pass (a lease that must expire in the store, a run that must not come).
 */
const FOLDER_TIERS = {
  chaos: 'unit',
  core: 'unit',
  lease: 'unit',
  lint: 'unit',
  module: 'unit',
  opentelemetry: 'unit',
  testing: 'unit',
  types: 'unit',
  cli: 'system',
  cluster: 'system',
  dashboard: 'system',
  integrations: 'system',
  'locked-down': 'system',
  readme: 'system',
  'run-setup': 'system',
  terminus: 'system',
  topologies: 'system',
};

/** The specs not in their folder's tier. */
const FILE_TIERS = {
  'chaos/fault-proxy.spec.ts': 'system',
  'cli/cli-arguments.spec.ts': 'unit',
  'cli/cli-help-in-docs.spec.ts': 'unit',
  'cli/cli-input-checks.spec.ts': 'integration',
  'cli/cli-operator-actions.spec.ts': 'integration',
  'cli/cli-views.spec.ts': 'integration',
  'dashboard/dashboard-cross-origin.spec.ts': 'unit',
  'dashboard/dashboard-http.spec.ts': 'integration',
  'dashboard/dashboard-open-page.spec.ts': 'unit',
  'dashboard/dashboard-options-fuzz.spec.ts': 'unit',
  'dashboard/dashboard-options.spec.ts': 'unit',
  'operators/job-health.spec.ts': 'unit',
  'cli/cli-health.spec.ts': 'unit',
  'opentelemetry/missed-metric.spec.ts': 'unit',
  'terminus/unhealthy-jobs.spec.ts': 'unit',
  'lease/fencing.spec.ts': 'system',
  'lease/timers.spec.ts': 'system',
  'module/redis-faults.spec.ts': 'system',
  'module/redis-option.spec.ts': 'integration',
  'occurrence/cron-schedule.spec.ts': 'unit',
  'occurrence/finished-run-not-rerun.spec.ts': 'system',
  'occurrence/occurrence-module.spec.ts': 'unit',
  'operators/admin.spec.ts': 'unit',
  'operators/health-check-at-shutdown.spec.ts': 'unit',
  'operators/health-store-outage.spec.ts': 'system',
  'operators/heartbeat-at-shutdown.spec.ts': 'unit',
  'operators/in-memory-admin.spec.ts': 'unit',
  'operators/operator-note-fuzz.spec.ts': 'unit',
  'postgres/postgres-finished-run-not-rerun.spec.ts': 'system',
  'postgres/postgres-frozen-claims.spec.ts': 'system',
  'postgres/postgres-module-jobs.spec.ts': 'system',
  'postgres/postgres-outages.spec.ts': 'system',
  'postgres/postgres-pgbouncer.spec.ts': 'system',
  'postgres/postgres-pgbouncer-prepared.spec.ts': 'system',
  'providers/batched-job-scripts.spec.ts': 'system',
  'providers/code-tables.spec.ts': 'unit',
  'providers/in-memory-lock-provider.spec.ts': 'unit',
  'providers/provider-options.spec.ts': 'unit',
  'providers/redis-endpoint.spec.ts': 'unit',
  'providers/redis-health-reading.spec.ts': 'system',
  'providers/redis-lock-provider.spec.ts': 'system',
  'providers/startup-check.spec.ts': 'system',
  'terminus/health-indicator.spec.ts': 'unit',
  'types/entry-points.spec.ts': 'system',
};

export const TIERS = ['unit', 'integration', 'system'];

/** The tier of `spec`, a path under test/ (`core/duration.spec.ts`). */
export function tierOf(spec) {
  return FILE_TIERS[spec] ?? FOLDER_TIERS[spec.split('/')[0]] ?? 'integration';
}

/** The specs of `tier`, as paths under test/. The apps of test/package/fixtures carry their own specs. */
export function specsOf(tier, testDir) {
  return readdirSync(testDir, { recursive: true })
    .map((path) => path.split('\\').join('/'))
    .filter((path) => path.endsWith('.spec.ts') && !path.startsWith('package/fixtures/'))
    .filter((spec) => tierOf(spec) === tier)
    .sort();
}
