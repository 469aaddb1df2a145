import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { parseDuration } from '../core/provider/duration.js';
import type { OperatorNote } from '../operators/cluster-records.js';
import {
  ACTOR_MAX_LENGTH,
  checkedOperatorNote,
  InvalidOperatorNoteError,
  REASON_MAX_LENGTH,
} from '../operators/operator-note.js';
import { DEFAULT_TABLE_PREFIX } from '../providers/postgres/postgres-options.js';
import { DEFAULT_KEY_PREFIX } from '../providers/redis/redis-options.js';
import { DEFAULT_HEALTH_POLICY } from '../operators/cluster-admin.js';
import type { HealthPolicy } from '../operators/job-health.js';
import { storeTarget, UsageError, type StoreTarget } from './store-target.js';

/** The CLI's help text, printed by `--help` and after a usage error. */
export const USAGE = `Usage: nest-scheduler-lock <command> [options]

Commands:
  jobs            every locked job a live node runs: schedule, pause, holder, next fire time, last run
  job NAME        one job in detail
  history NAME    the job's last runs and operator actions, newest first
  nodes           the live nodes: version, start, last heartbeat, jobs
  health          each job's health: on-time, late, missed (with the times), failing, paused, never-run;
                  exit code 1 when a job is late, missed an occurrence or is failing (for a probe)
  pause NAME      every node skips the job's ticks (reason paused) until resume; a run in progress goes on
  resume NAME     ends a pause
  trigger NAME    runs the job once now on one node that has it; refused while a run holds its lock
  unlock NAME     force-releases the job's lock; its run sees the lock lost (not-owner) at its next renewal
  election NAME   an election's leader, term and since when
  elections       every election a live node takes part in: leader, term and since when
  step-down NAME  makes the election's leader step down and release its lease, so another node leads

Options:
  --redis URL     redis:// or rediss:// URL, or host:port (default: $REDIS_URL). A comma-separated list
                  connects to a Redis Cluster through those startup nodes. A URL with a password belongs in
                  REDIS_URL, not here: every user of the machine sees a command's arguments (ps)
  --cluster       connect to a Redis Cluster (startup node: --redis)
  --prefix P      Redis: the apps' keyPrefix (default: ${DEFAULT_KEY_PREFIX})
  --postgres URL  postgres:// or postgresql:// URL of the apps' database (default: $DATABASE_URL); needs the
                  pg package installed. A URL with a password belongs in DATABASE_URL, not here (ps)
  --schema S      PostgreSQL: the apps' schema (default: public)
  --table-prefix P
                  PostgreSQL: the apps' tablePrefix (default: ${DEFAULT_TABLE_PREFIX})
  --heartbeat D   the apps' heartbeatInterval, e.g. 5s (default): a node silent for 3 of them is gone
  --grace D       health: the apps' health.grace, e.g. 30s (default)
  --failing-after N
                  health: the apps' health.failingAfter (default 3)
  --json          machine-readable JSON on stdout
  --actor A       who acts, recorded in the job's history (default: cli:<your user name>; at most
                  ${ACTOR_MAX_LENGTH} characters)
  --reason R      why, recorded in the job's history (at most ${REASON_MAX_LENGTH} characters; in both, no control
                  characters)
  --limit N       history: how many entries (default 20)
  -h, --help      this text

Exit codes: 0 done; 1 failed (unknown job, store unreachable, trigger refused or not taken, a job
unhealthy); 2 usage error.`;

/** The commands that read, and those that steer a job. */
const READS = ['jobs', 'nodes', 'health', 'job', 'history', 'election', 'elections'] as const;
const OPERATOR_COMMANDS = ['pause', 'resume', 'trigger', 'unlock', 'step-down'] as const;
type OperatorCommand = (typeof OPERATOR_COMMANDS)[number];

/** What to do: a command and its job, with the operator note of a operator command. */
export type Command =
  | { readonly name: 'jobs' | 'nodes' | 'health' | 'elections' }
  | { readonly name: 'job' | 'history' | 'election'; readonly job: string }
  | { readonly name: OperatorCommand; readonly job: string; readonly note: OperatorNote };

/** A command line, parsed. */
export interface Invocation {
  readonly command: Command;
  /** The store the apps share, and where in it their records are. */
  readonly store: StoreTarget;
  /** The apps' `heartbeatInterval` (ms). */
  readonly heartbeatInterval: number;
  /** The apps' `health` option. */
  readonly health: HealthPolicy;
  readonly json: boolean;
  /** How many history entries to show. */
  readonly limit: number;
}

const OPTIONS = {
  redis: { type: 'string' },
  cluster: { type: 'boolean' },
  prefix: { type: 'string' },
  postgres: { type: 'string' },
  schema: { type: 'string' },
  'table-prefix': { type: 'string' },
  heartbeat: { type: 'string' },
  grace: { type: 'string' },
  'failing-after': { type: 'string' },
  json: { type: 'boolean' },
  actor: { type: 'string' },
  reason: { type: 'string' },
  limit: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** The module's `heartbeatInterval` default. */
const DEFAULT_HEARTBEAT = '5s';
const DEFAULT_HISTORY_LIMIT = 20;

/**
 * Parses the arguments after `nest-scheduler-lock`; `help` when they ask for the help text.
 * @throws UsageError for anything the CLI cannot run.
 */
export function parseInvocation(args: readonly string[], env: NodeJS.ProcessEnv): Invocation | 'help' {
  let parsed;
  try {
    parsed = parseArgs({ args: [...args], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (error) {
    // node:util's messages name the option and how it was wrong.
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  if (values.help) return 'help';
  return {
    command: command(positionals, values),
    store: storeTarget(values, env),
    heartbeatInterval: heartbeat(values.heartbeat ?? DEFAULT_HEARTBEAT),
    health: healthPolicy(values.grace, values['failing-after']),
    json: values.json ?? false,
    limit: limit(values.limit),
  };
}

function command(positionals: string[], values: { actor?: string; reason?: string }): Command {
  const [name, job, ...extra] = positionals;
  if (name === undefined) throw new UsageError('no command given');
  if (extra.length > 0) throw new UsageError(`unexpected argument${extra.length > 1 ? 's' : ''}: ${extra.join(' ')}`);
  if (name === 'jobs' || name === 'nodes' || name === 'health' || name === 'elections') {
    if (job !== undefined) throw new UsageError(`${name} takes no job name (got "${job}")`);
    return { name };
  }
  const known = [...READS, ...OPERATOR_COMMANDS] as readonly string[];
  if (!known.includes(name)) throw new UsageError(`unknown command "${name}"; the commands are ${known.join(', ')}`);
  if (job === undefined || job === '') throw new UsageError(`${name} needs a job name: ${name} NAME`);
  if (name === 'job' || name === 'history' || name === 'election') return { name, job };
  const actor = values.actor ?? defaultActor();
  if (actor === undefined) throw new UsageError(`${name} needs --actor: the user name is unknown`);
  return { name: name as OperatorCommand, job, note: checkedNote({ actor, reason: values.reason }) };
}

/** `note` as the admin checks it, before the CLI connects: a note it would refuse is a usage error. */
function checkedNote(note: OperatorNote): OperatorNote {
  try {
    return checkedOperatorNote(note);
  } catch (error) {
    if (!(error instanceof InvalidOperatorNoteError)) throw error;
    throw new UsageError(`--${error.field} ${error.problem}`);
  }
}

/** `cli:<user name>`; `undefined` where the OS has no user name for this process (a container without one). */
function defaultActor(): string | undefined {
  try {
    return `cli:${userInfo().username}`;
  } catch {
    return undefined;
  }
}

function heartbeat(value: string): number {
  let ms: number;
  try {
    ms = parseDuration(value);
  } catch (error) {
    throw new UsageError(`--heartbeat: ${(error as Error).message}`);
  }
  if (ms <= 0) throw new UsageError(`--heartbeat must be longer than 0 (got "${value}")`);
  return ms;
}

function limit(value: string | undefined): number {
  if (value === undefined) return DEFAULT_HISTORY_LIMIT;
  const count = Number(value);
  if (!Number.isInteger(count) || count < 1)
    throw new UsageError(`--limit must be a whole number of at least 1 (got "${value}")`);
  return count;
}

/** `--grace` and `--failing-after`, as the apps' `health` option. */
function healthPolicy(grace: string | undefined, failingAfter: string | undefined): HealthPolicy {
  let { grace: graceMs, failingAfter: count } = DEFAULT_HEALTH_POLICY;
  if (grace !== undefined) {
    try {
      graceMs = parseDuration(grace);
    } catch {
      throw new UsageError(`--grace must be a duration such as 30s (got "${grace}")`);
    }
  }
  if (failingAfter !== undefined) {
    if (!/^[1-9]\d{0,8}$/.test(failingAfter)) {
      throw new UsageError(`--failing-after must be a whole number from 1 (got "${failingAfter}")`);
    }
    count = Number(failingAfter);
  }
  return { ...DEFAULT_HEALTH_POLICY, grace: graceMs, failingAfter: count };
}
