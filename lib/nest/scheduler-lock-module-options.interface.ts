import type { RedisOptions } from 'ioredis';
import type { DurationInput } from '../core/provider/duration.js';
import type { KeepAlive } from '../core/provider/lock-configuration.js';
import type { LockProvider } from '../core/provider/lock-provider.js';
import type { RunInstrumentation } from '../core/executor/run-instrumentation.js';
import type { IoredisForkClient, RedisClient } from '../providers/redis/redis-client.js';
import type { RetryOptions } from '../occurrence/occurrence-options.js';

/**
 * Options of `SchedulerLockModule.forRoot()` / `forRootAsync()`, checked when the app starts: a value outside what
 * each option says, or a key that is none of these, fails the startup naming the option and the value. A duration
 * the module waits for on a timer (`shutdownTimeout`, `acquireTimeout`, `heartbeatInterval`, `replicaAckTimeout`,
 * a `keepAlive` lease) is at most 2^31-1 ms, about 24.8 days: the longest Node.js timer.
 */
export interface SchedulerLockModuleOptions {
  /**
   * Where locks live: an ioredis (or iovalkey) `Redis` or `Cluster` instance (used as is, never closed by the
   * module), or ioredis options / a `redis://` URL (the module creates that client and closes it on
   * shutdown). Set exactly one of `redis` and `provider`.
   */
  redis?: RedisClient | IoredisForkClient | RedisOptions | string;
  /** Any {@link LockProvider} instead of `redis`, for example `new InMemoryLockProvider()` in tests. */
  provider?: LockProvider;
  /**
   * With `redis`: prefix of every Redis key, so several apps or environments can share one Redis: a non-empty
   * string. Default `job-lock`. With `provider`, refused: pass it to the provider's options.
   */
  keyPrefix?: string;
  /**
   * How long a lock is held at most when a job does not say: a node that dies holding it blocks the job
   * this long. Required.
   */
  defaultLockAtMostFor: DurationInput;
  /** How long a lock is held at least when a job does not say. Default 0. */
  defaultLockAtLeastFor?: DurationInput;
  /**
   * This node's name: stored with each lock the module's `redis` store takes, and the node in lock events, in
   * the console's node list and in operator actions. A non-empty string. Default `<hostname>:<pid>`.
   * With `provider`, the default is the provider's own `node`. The module's value does not reach a
   * provider the app built: set the name in the provider's options.
   */
  node?: string;
  /**
   * Renew every job's lock while it runs (`true` = 30 s lease, or `{ lease }`), unless the job sets its
   * own `keepAlive`. Default `false`.
   */
  keepAlive?: KeepAlive;
  /** On `app.close()`, how long runs in progress are awaited before their signal is aborted. Default 10 s. */
  shutdownTimeout?: DurationInput;
  /**
   * How long a lock attempt may wait for the store before the tick is skipped (`provider-error`). Default 2 s.
   * A burst's attempts wait longer: half of it more per 250 in flight, at most four times it, and at most half
   * the lock's `lockAtMostFor` (or `keepAlive` lease). A lock that arrives later is released at once.
   */
  acquireTimeout?: DurationInput;
  /**
   * With `redis`: how many runs (and operator actions) each job's history keeps, for `SchedulerLockAdmin`, the
   * CLI and the status page: a whole number from 1 to 2^31-1. Default 50. With `provider`, refused: pass it to
   * the provider's options.
   */
  historyLimit?: number;
  /**
   * How often this node publishes itself and its locked jobs for operators (a node silent for 3 intervals is
   * shown as gone), and sends its skip counts. Default 5 s. Triggers are looked for every second.
   */
  heartbeatInterval?: DurationInput;
  /** How strict job health is (`SchedulerLockAdmin.listHealth()`, the `missed` and `failing` events). */
  health?: JobHealthOptions;
  /**
   * How a failed occurrence of a once-per-occurrence cron job is retried, unless the job sets its own `retry`
   * (`false` for none). Default: no retry.
   */
  retry?: RetryOptions;
  /**
   * With `redis`: a lock counts as taken only once this many replicas acknowledged it (Redis `WAIT` after
   * each lock taken: one more round trip), so a failover right after it was taken does not lose it. While
   * fewer replicas answer, locked ticks are skipped (`provider-error`). A whole number from 1 to 2^31-1. Not on a
   * Cluster client. Default: none.
   */
  minReplicasToAck?: number;
  /**
   * How long a taken lock waits for `minReplicasToAck` replicas before it is released and the tick skipped.
   * Must be shorter than `acquireTimeout`. Default 500 ms.
   */
  replicaAckTimeout?: DurationInput;
  /**
   * Wraps each locked run and watches the lock events: `new SchedulerLockTelemetry()` from
   * `nest-scheduler-lock/opentelemetry` for a span per run and lock metrics. Default: none.
   */
  instrumentation?: RunInstrumentation;
  /**
   * Log each tick this node skipped because the lock was held (`locked`), the occurrence already ran
   * (`already-ran`) or an operator paused the job (`paused`), at debug level. Default `false`: a skip is
   * routine on every node but one, and stays an event (`skipped`) and a counter.
   */
  logSkips?: boolean;
  /**
   * The election whose leader runs the ticks of every locked job that does not set `leader` itself. Default: none,
   * every node tries every tick.
   */
  defaultLeader?: string;
  /**
   * Before the app reports it started, the module checks its store once: credentials, the commands it
   * needs (ACL) and the TLS certificate. `'fail'` (default): a store that refuses any of them fails the
   * startup with an error naming the endpoint and the cause. `'warn'`: the app logs that as a warning and
   * starts, its locked ticks skipped until the store is fixed. An unreachable store fails neither: it is
   * an outage, and the app starts.
   */
  startupCheck?: 'fail' | 'warn';
}

/** Options of {@link SchedulerLockModuleOptions.health}; another key throws naming it. */
export interface JobHealthOptions {
  /** How long after its time an occurrence may start before it counts as late. Default 30 s. */
  grace?: DurationInput;
  /** How many failed runs in a row make a job failing: a whole number from 1. Default 3. */
  failingAfter?: number;
  /**
   * After how many failed runs in a row the scheduler pauses the job: a whole number from 1. The pause is
   * recorded in its history as an operator action by `scheduler`, and `resume` ends it. Default: never.
   */
  pauseAfter?: number;
}
