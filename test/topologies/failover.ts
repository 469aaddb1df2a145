import type { Redis } from 'ioredis';
import { jobEvent, type LockEventOf } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import type { SchedulerApp } from '../support/scheduler-app.js';
import { waitUntil } from '../support/wait-until.js';

/** A running app, the topology under it, and how to fail over its primary. */
export interface Failover {
  /** An app whose locked interval job `job` has already run once. */
  readonly app: SchedulerApp;
  readonly job: string;
  /** Direct connections to the primary that serves the job's lock keys and to its replica. */
  readonly primaryAdmin: Redis;
  readonly replicaAdmin: Redis;
  /** The key of the job's fence counter. */
  readonly fenceKey: string;
  /** SIGKILLs the primary. */
  killPrimary(): Promise<void>;
  /** Whether the topology has promoted the replica, and who does, for the timeout message. */
  readonly promotion: { readonly done: () => Promise<boolean>; readonly by: string };
  /** What the topology does once the replica is promoted, before the job locks again (bring a replica back). */
  readonly afterPromotion?: () => Promise<void>;
}

/**
 * What every topology must show through a failover: writes on the primary are frozen until the replica
 * has applied them (so every token drawn so far is on it), the primary is killed; then ticks are
 * skipped as store errors, with a logged error (per lock or per outage), while no primary answers, and once the replica is
 * promoted the job locks there again, its first token above every earlier one.
 */
export async function expectLocksThroughFailover({
  app,
  job,
  primaryAdmin,
  replicaAdmin,
  fenceKey,
  killPrimary,
  promotion,
  afterPromotion,
}: Failover): Promise<void> {
  const storeErrorSkip = nextEvent(
    app.events$,
    (event) => event.type === 'skipped' && event.jobName === job && event.reason === 'provider-error',
    20_000,
  );

  await primaryAdmin.call('CLIENT', 'PAUSE', '60000', 'WRITE');
  const written = await replicationOffset(primaryAdmin, 'master_repl_offset');
  await waitUntil(
    async () => (await replicationOffset(replicaAdmin, 'slave_repl_offset')) >= written,
    'the replica applied every write',
  );
  primaryAdmin.disconnect(); // before the kill, or it would keep reconnecting to a dead port
  await killPrimary();
  const tokensBefore = app.recorded.filter(jobEvent('acquired', job)).map((event) => event.fencingToken!);

  await waitUntil(promotion.done, `${promotion.by} promoted the replica`, { timeoutMs: 20_000, intervalMs: 100 });
  const promotedAt = new Date();
  await storeErrorSkip;
  await afterPromotion?.();
  // A client whose only connection is lost (through Sentinel) logs the outage once; a Cluster that lost one
  // master logs the locks that failed.
  const logged = app.logs.texts('error', 'SchedulerLock');
  const reported = (text: string) =>
    text.startsWith(`Could not take lock "${job}"`) || /^Redis .+ is unreachable \(/.test(text);
  expect(logged.some(reported)).toBe(true);

  const first = await nextEvent(
    app.history$,
    (event): event is LockEventOf<'acquired'> => jobEvent('acquired', job)(event) && event.at >= promotedAt,
    20_000,
  );
  expect(first.fencingToken).toBeGreaterThan(Math.max(...tokensBefore));
  expect(Number(await replicaAdmin.get(fenceKey))).toBeGreaterThanOrEqual(first.fencingToken!);
  await nextEvent(
    app.history$,
    (event) => jobEvent('released', job)(event) && event.fencingToken === first.fencingToken,
    10_000,
  );
}

/** A replication offset from `INFO replication`: what a primary has written, or what a replica has applied. */
async function replicationOffset(client: Redis, field: 'master_repl_offset' | 'slave_repl_offset'): Promise<number> {
  const offset = new RegExp(`^${field}:(\\d+)`, 'm').exec(await client.info('replication'));
  if (!offset) throw new Error(`INFO replication has no ${field}`);
  return Number(offset[1]);
}
