import { strict as assert } from 'node:assert';
import { setImmediate as turn } from 'node:timers/promises';
import type { LockConfiguration } from '../core/provider/lock-configuration.js';
import type { JobRecord, LockProvider } from '../core/provider/lock-provider.js';
import {
  canReadJobRecords,
  canRenewLeases,
  type JobRecordReader,
  type OccurrenceLockProvider,
  type RecoveringLockProvider,
} from '../core/provider/provider-abilities.js';
import type { LockEvent } from '../core/task/lock-events.js';
import { uniqueLockName } from './lock-probes.js';
import { loadKitModules } from './module-loader.js';
import type { KitApp } from './module/contract-app.js';
import type { LockEventRecorder } from './module/contract-jobs.js';
import type { OccurrenceJobKind, OccurrenceRun } from './module/occurrence-jobs.js';
import { claimed, finish, jobConfig } from './occurrence-probes.js';
import type { CheckDefinition, KitClock } from './provider-subject.js';
import { awaitUntil } from './timing.js';

/** An hour, in ms. */
const HOUR = 3_600_000;

type Apps = KitApp<LockEventRecorder>[];

/**
 * Runs `body` against one app per node of `nodes`, all running the cron job `kind` named `name`, then closes
 * them and fails if one logged an error. Nest is loaded here, as in the module checks.
 */
async function inApps(
  clock: KitClock,
  nodes: readonly LockProvider[],
  kind: OccurrenceJobKind,
  name: string,
  runs: OccurrenceRun[],
  body: (apps: Apps) => Promise<void>,
): Promise<void> {
  const { startKitApp, occurrenceJob } = await loadKitModules();
  const Jobs = occurrenceJob(kind, name, runs);
  const apps = await Promise.all(nodes.map((node) => startKitApp(node, Jobs, [name], clock)));
  try {
    await body(apps);
    // Before the apps close: a tick that their shutdown cuts short may log its release failing.
    const errors = apps.flatMap((app) => app.complaints).filter((line) => line.startsWith('error:'));
    assert.deepEqual(errors, [], 'an app logged errors');
  } finally {
    await Promise.all(apps.map((app) => app.close()));
  }
}

/** A tick's (or a catch-up's) end for the job `name`: it ran and released its lock, or it was skipped. */
const tickEnded = (name: string) => (event: LockEvent) =>
  event.jobName === name && (event.type === 'released' || event.type === 'skipped');

/** The skip reasons of `name` the apps saw. */
const skipReasons = (apps: Apps, name: string) =>
  apps.flatMap((app) =>
    app.jobs.recorded.flatMap((event) => (event.type === 'skipped' && event.jobName === name ? [event.reason] : [])),
  );

/**
 * `node`, whose `readJobRecord(name)` calls are watched: `read` resolves with what the first one answered (the
 * catch-up's look at the record, which no event announces), and `claims` counts its claims of `name`.
 */
function watchRecordReads<P extends OccurrenceLockProvider & JobRecordReader>(node: P, name: string) {
  let answered!: (record: JobRecord | undefined) => void;
  const watched = { read: new Promise<JobRecord | undefined>((resolve) => (answered = resolve)), claims: 0 };
  const provider = new Proxy(node, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (key === 'readJobRecord') {
        return async (lockName: string) => {
          const record = await target.readJobRecord(lockName);
          if (lockName === name) answered(record);
          return record;
        };
      }
      if (key === 'lockOccurrence') {
        return (configuration: LockConfiguration, occurrence: Date) => {
          if (configuration.name === name) watched.claims += 1;
          return target.lockOccurrence(configuration, occurrence);
        };
      }
      return (value as (...args: unknown[]) => unknown).bind(target);
    },
  });
  return { provider, watched };
}

/**
 * Waits until each app decided whether to catch `name` up: it read the record and claimed nothing, or its
 * catch-up claim ended (ran or skipped).
 */
async function catchUpsDecided(
  clock: KitClock,
  apps: Apps,
  name: string,
  watched: readonly { read: Promise<unknown>; claims: number }[],
): Promise<void> {
  await Promise.all(
    apps.map(async (app, index) => {
      await awaitUntil(clock, watched[index].read, clock.now() + 10_000, `the catch-up's read of ${name}`);
      await turn(); // the catch-up claims, if it does, right after the read
      if (watched[index].claims > 0) await app.jobs.events(tickEnded(name), 1, `the end of the catch-up of ${name}`);
    }),
  );
}

/** `lockOccurrence()` under `SchedulerLockModule`: a cron job's occurrences run once across the apps. */
export const occurrenceModuleChecks: CheckDefinition<OccurrenceLockProvider>[] = [
  {
    name: 'runs each occurrence of a @Cron job once across two apps; the other skips it (already-ran or locked)',
    concurrent: true,
    async run({ provider, other, clock }) {
      const [name, runs] = [uniqueLockName('cron'), [] as OccurrenceRun[]];
      await inApps(clock, [provider, other], 'everySecond', name, runs, async (apps) => {
        const twoRan = (event: LockEvent) => tickEnded(name)(event) && runs.length >= 2;
        await Promise.all(apps.map((app) => app.jobs.events(tickEnded(name), 2, `tick ends of ${name}`)));
        await apps[0].jobs.events(twoRan, 1, `a tick end of ${name} after two runs`);
        const occurrences = runs.map((run) => run.occurrence!);
        assert.ok(occurrences.length >= 2, `${occurrences.length} occurrences ran`);
        assert.equal(new Set(occurrences).size, occurrences.length, `an occurrence ran twice: ${occurrences}`);
        assert.deepEqual(
          occurrences.filter((at) => at % 1_000 !== 0),
          [],
          'runs not on a nominal fire time',
        );
        for (const reason of skipReasons(apps, name)) assert.ok(['already-ran', 'locked'].includes(reason), reason);
      });
    },
  },
  {
    name: 'skips a tick whose occurrence another node claimed already, as already-ran, though its lock is free',
    concurrent: true,
    async run({ provider, other, clock }) {
      const [name, runs] = [uniqueLockName('cron'), [] as OccurrenceRun[]];
      // Another node ran the occurrence an hour ahead: every earlier one counts as run.
      await finish(claimed(await other.lockOccurrence(jobConfig(name), new Date(Date.now() + HOUR))), 'succeeded');
      await inApps(clock, [provider], 'everySecond', name, runs, async ([app]) => {
        await app.jobs.events(tickEnded(name), 2, `tick ends of ${name}`);
        assert.deepEqual(skipReasons([app], name), ['already-ran', 'already-ran']);
        assert.deepEqual(runs, []);
      });
    },
  },
];

/** `readJobRecord()` under `SchedulerLockModule`: `catchUp` runs the latest missed occurrence once, cluster-wide. */
export const catchUpChecks: CheckDefinition<OccurrenceLockProvider & JobRecordReader>[] = [
  {
    name: 'catches up the latest missed occurrence once, across two apps starting together (catchUp)',
    concurrent: true,
    async run({ provider, other, clock }) {
      const [name, runs] = [uniqueLockName('catch-up'), [] as OccurrenceRun[]];
      const year = new Date().getFullYear();
      const [missed, ranBefore] = [new Date(year, 0, 1).getTime(), new Date(year - 1, 0, 1).getTime()];
      // The job last ran the occurrence before: the cluster was down at `missed`.
      await finish(claimed(await other.lockOccurrence(jobConfig(name), new Date(ranBefore))), 'succeeded');
      const nodes = [provider, other].map((node) => watchRecordReads(node, name));
      await inApps(
        clock,
        nodes.map((node) => node.provider),
        'yearly',
        name,
        runs,
        async (apps) => {
          await catchUpsDecided(
            clock,
            apps,
            name,
            nodes.map((node) => node.watched),
          );
          const seen = runs.map(({ occurrence, catchUp }) => ({ occurrence, catchUp }));
          assert.deepEqual(seen, [{ occurrence: missed, catchUp: true }], 'the catch-up runs');
          const { occurrence, state, attempt } = (await provider.readJobRecord(name)) ?? {};
          assert.deepEqual(
            { occurrence: occurrence?.getTime(), state, attempt },
            { occurrence: missed, state: 'succeeded', attempt: 1 },
            'the job record after the catch-up',
          );
        },
      );
    },
  },
  {
    name: 'does not catch up a job that never ran (no record)',
    concurrent: true,
    async run({ provider, clock }) {
      const [name, runs] = [uniqueLockName('catch-up'), [] as OccurrenceRun[]];
      const { provider: node, watched } = watchRecordReads(provider, name);
      await inApps(clock, [node], 'yearly', name, runs, async (apps) => {
        await catchUpsDecided(clock, apps, name, [watched]);
        assert.equal(await watched.read, undefined, 'the record the catch-up read');
        assert.deepEqual([watched.claims, runs], [0, []], 'claims and runs of a job that never ran');
      });
    },
  },
];

/** `recoverOccurrence()` under `SchedulerLockModule`: `onCrash: 'rerun'` re-runs a dead node's occurrence once. */
export const rerunChecks: CheckDefinition<RecoveringLockProvider>[] = [
  {
    name: "re-runs once, on one of two apps, the occurrence of a node that died (onCrash: 'rerun'), naming it",
    concurrent: true,
    async run({ provider, other, connect, clock }) {
      const [name, runs] = [uniqueLockName('rerun'), [] as OccurrenceRun[]];
      const dead = await connect('dead-node');
      // With a lease (where the store renews them), watchers look every 100 ms: the re-run comes well before the next.
      const kind = canRenewLeases(provider) ? 'rerunLeased' : 'rerun';
      await inApps(clock, [provider, other], kind, name, runs, async ([app]) => {
        // Once the apps run, a node claims the next occurrence at least a second away with a 300 ms lock, and dies.
        // On a busy machine the apps may claim it first: the dead node then takes the next one they have not.
        let occurrence = Math.ceil((Date.now() + 1_000) / 3_000) * 3_000;
        let claim = await dead.lockOccurrence(jobConfig(name, 300), new Date(occurrence));
        for (let tries = 1; !('lock' in claim) && tries < 5; tries += 1) {
          occurrence += 3_000;
          claim = await dead.lockOccurrence(jobConfig(name, 300), new Date(occurrence));
        }
        claimed(claim);
        const deadRunBy = canReadJobRecords(dead) ? (await dead.readJobRecord(name))?.node : undefined;
        // The next occurrence ran: both apps stopped watching the dead one before it.
        const nextRan = () => runs.some((run) => run.occurrence! > occurrence);
        await app.jobs.events((event) => tickEnded(name)(event) && nextRan(), 1, `a tick after ${name}`, 15_000);
        const reRuns = runs.filter((run) => run.occurrence === occurrence);
        assert.deepEqual(
          reRuns.map(({ attempt, previousNode }) => ({ attempt, previousNode })),
          [{ attempt: 2, previousNode: deadRunBy ?? reRuns[0]?.previousNode }],
          `the runs of occurrence ${new Date(occurrence).toISOString()}`,
        );
        assert.ok(reRuns[0].previousNode, 'a re-run names the node that died');
      });
    },
  },
];
