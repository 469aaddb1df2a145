import { SchedulerLockConfigurationError } from '../../core/provider/lock-configuration.js';
import { identifierProblem } from './postgres-options.js';

/** Where the provider's table lives: a schema, and a prefix for the table's name. */
export interface PostgresTableName {
  readonly schema: string;
  readonly tablePrefix: string;
}

/** The quoted, schema-qualified names of the provider's tables. */
export interface PostgresTables {
  /** One row per lock name: the lock, its fencing token, a job's record and pause. */
  readonly locks: string;
  /** Each job's last runs and operator actions, a ring of `historyLimit` slots per lock name. */
  readonly history: string;
  /** The operator console's catalogue of locked jobs, by job name. */
  readonly jobs: string;
  /** The nodes' last heartbeats. */
  readonly nodes: string;
  /** Skipped ticks, counted per lock name and reason. */
  readonly skips: string;
  /** Triggers waiting for a node, by job name, and what became of them (kept a few minutes). */
  readonly triggers: string;
  readonly triggerResults: string;
  /** The claims of missed occurrences' reports, by lock name and occurrence (kept 30 days). */
  readonly healthReports: string;
  /** One row: who reads the cluster's health, since and until when, and the unhealthy jobs it left. */
  readonly healthTurn: string;
}

/** The tables of `name`, checked to be plain identifiers. */
export function postgresTables({ schema, tablePrefix }: PostgresTableName): PostgresTables {
  for (const [option, value] of [
    ['schema', schema],
    ['tablePrefix', tablePrefix],
  ] as const) {
    const problem = identifierProblem(value);
    if (problem) throw new SchedulerLockConfigurationError(`PostgresLockProvider: ${option} ${problem}`);
  }
  const table = (name: string) => `"${schema}"."${tablePrefix}${name}"`;
  return {
    locks: table('locks'),
    history: table('history'),
    jobs: table('jobs'),
    nodes: table('nodes'),
    skips: table('skips'),
    triggers: table('triggers'),
    triggerResults: table('trigger_results'),
    healthReports: table('health_reports'),
    healthTurn: table('health_turn'),
  };
}

/**
 * The tables, as `CREATE TABLE IF NOT EXISTS` statements, the locks table last (its presence means all are
 * there). A job's lock row is kept (its record, pause and history sequence); a plain lock's row is deleted on
 * release, its fencing token drawn from the database's clock so that tokens still only grow; a lock is
 * free once `lock_until` has passed on the database's clock, or once an operator force-released it (its
 * `owner` is then a marker, `force-unlocked:<epoch ms>:<actor>`). The `run_*` columns are a once-per-occurrence
 * job's record; `paused` an operator's pause (JSON). Every other table is bounded: the history by its ring of
 * slots, nodes by `forgetNodes`, trigger results and missed reports by age. The README prints this DDL for
 * DBAs who create the tables themselves.
 */
export function tablesDdl(tables: PostgresTables): string[] {
  return [
    `CREATE TABLE IF NOT EXISTS ${tables.history} (
  name text NOT NULL,
  slot integer NOT NULL,
  seq bigint NOT NULL,
  entry jsonb NOT NULL,
  PRIMARY KEY (name, slot)
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.jobs} (job_name text PRIMARY KEY, job jsonb NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${tables.nodes} (
  locked_by text PRIMARY KEY,
  last_seen bigint NOT NULL,
  node jsonb NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.skips} (
  name text NOT NULL,
  reason text NOT NULL,
  count bigint NOT NULL,
  PRIMARY KEY (name, reason)
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.triggers} (job_name text PRIMARY KEY, request jsonb NOT NULL)`,
    `CREATE TABLE IF NOT EXISTS ${tables.triggerResults} (
  id text PRIMARY KEY,
  result jsonb NOT NULL,
  reported_at timestamptz NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.healthReports} (
  name text NOT NULL,
  kind text NOT NULL,
  at bigint NOT NULL,
  reported_at timestamptz NOT NULL,
  PRIMARY KEY (name, kind, at)
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.healthTurn} (
  turn boolean PRIMARY KEY CHECK (turn),
  locked_by text NOT NULL,
  held_since timestamptz NOT NULL,
  lease_until timestamptz NOT NULL,
  unhealthy jsonb NOT NULL
)`,
    `CREATE TABLE IF NOT EXISTS ${tables.locks} (
  name text PRIMARY KEY,
  owner text NOT NULL,
  locked_by text NOT NULL,
  locked_at timestamptz NOT NULL,
  lock_until timestamptz NOT NULL,
  fencing_token bigint NOT NULL,
  paused jsonb,
  history_seq bigint NOT NULL DEFAULT 0,
  occurrence bigint,
  run_state text,
  run_owner text,
  run_by text,
  run_started_at timestamptz,
  run_finished_at timestamptz,
  run_attempt integer,
  run_previous_holder text,
  run_orphaned_at timestamptz
)`,
  ];
}
