import { strict as assert } from 'node:assert';
import { currentLock } from '../core/task/lock-context.js';
import type { LockEvent, LockEventType } from '../core/task/lock-events.js';
import type { LockProvider } from '../core/provider/lock-provider.js';
import { isLocked, lockConfig, lockWhenFree, mustLock, uniqueLockName } from './lock-probes.js';
import type { ContractApp } from './module/contract-app.js';
import { loadKitModules } from './module-loader.js';
import type { CheckDefinition, CheckNodes } from './provider-subject.js';

/**
 * Runs `body` against an app on the check's first node, then closes it and fails if it logged an error or a
 * warning. Nest is loaded here, on the first module check: the rest of the kit never loads it.
 */
async function throughTheModule(nodes: CheckNodes, body: (app: ContractApp) => Promise<void>): Promise<void> {
  const { startContractApp } = await loadKitModules();
  const app = await startContractApp(nodes.provider, nodes.other, nodes.clock);
  try {
    await body(app);
  } finally {
    await app.close();
  }
  assert.deepEqual(app.complaints, [], 'the app logged errors or warnings');
}

const jobEvent = (type: LockEventType, job: string) => (event: LockEvent) =>
  event.type === type && event.jobName === job;

/** Two ticks of `job`, each run under its own lock as another node saw it, and released after. */
async function assertTwoLockedTicks(app: ContractApp, job: string): Promise<void> {
  // A second run under the same lock shows the first one released it (lockAtMostFor is 10 s).
  await app.jobs.events(jobEvent('released', job), 2, `released events of ${job}`);
  const locked = { lockName: job, heldElsewhere: true };
  assert.deepEqual(app.jobs.runs.get(job)?.slice(0, 2), [locked, locked], `the runs of ${job}`);
}

/**
 * The provider under `SchedulerLockModule`: `@Cron`, `@Interval` and `@Timeout` jobs and `executeWithLock`
 * run under its locks, skip while another node holds them, and release them, with nothing logged as an
 * error or a warning. Needs only `lock()`, `unlock()` and `extend()`.
 */
export const moduleChecks: CheckDefinition<LockProvider>[] = [
  {
    name: 'runs a @Cron job under its lock on every tick, releasing it after each',
    run: (nodes) => throughTheModule(nodes, (app) => assertTwoLockedTicks(app, app.names.cron)),
  },
  {
    name: 'runs an @Interval job under its lock on every tick, releasing it after each',
    run: (nodes) => throughTheModule(nodes, (app) => assertTwoLockedTicks(app, app.names.interval)),
  },
  {
    name: 'runs a @Timeout job once under its lock, and releases it',
    run: (nodes) =>
      throughTheModule(nodes, async (app) => {
        const job = app.names.timeout;
        await app.jobs.events(jobEvent('released', job), 1, `released events of ${job}`);
        assert.deepEqual(app.jobs.runs.get(job), [{ lockName: job, heldElsewhere: true }]);
        assert.equal(await isLocked(nodes.other, job), false, 'the timeout job left its lock held');
      }),
  },
  {
    name: 'skips ticks while another node holds the lock, and runs again once it is released',
    run: (nodes) =>
      throughTheModule(nodes, async (app) => {
        const job = app.names.interval;
        // Between two runs: a run holds the lock while it looks at it from the other node.
        const { value: held } = await lockWhenFree(
          nodes.clock,
          nodes.other,
          lockConfig(job),
          nodes.clock.now() + 5_000,
        );
        const [skipped] = await app.jobs.events(jobEvent('skipped', job), 1, `skipped events of ${job}`);
        assert.equal(skipped.type === 'skipped' && skipped.reason, 'locked');
        const releasedBefore = app.jobs.recorded.filter(jobEvent('released', job)).length;
        await held.unlock();
        await app.jobs.events(jobEvent('released', job), releasedBefore + 1, `released events of ${job}`);
      }),
  },
  {
    name: 'runs executeWithLock tasks under the lock, extends and releases it, skips it held elsewhere',
    run: (nodes) =>
      throughTheModule(nodes, async ({ executor }) => {
        const name = uniqueLockName('execute');
        const outcome = await executor.executeWithLock(
          async () => {
            const lock = currentLock()!;
            const heldBefore = await isLocked(nodes.other, name);
            await lock.extend('20s');
            return { lockName: lock.name, heldBefore, heldAfterExtend: await isLocked(nodes.other, name) };
          },
          { name, lockAtMostFor: '5s' },
        );
        const ran = { lockName: name, heldBefore: true, heldAfterExtend: true };
        assert.deepEqual(outcome, { executed: true, result: ran });
        assert.equal(await isLocked(nodes.other, name), false, 'executeWithLock left its lock held');
        const held = await mustLock(nodes.other, lockConfig(name));
        assert.deepEqual(await executor.executeWithLock(() => 'ran', { name }), { executed: false, reason: 'locked' });
        await held.unlock();
      }),
  },
];
