import { strict as assert } from 'node:assert';
import type { CatalogueJob, ClusterNode, HistoryEntry } from '../operators/cluster-records.js';
import type { JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';
import { won } from './job-lock-checks.js';
import { catalogueEntry, lockConfig, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';

type Check = CheckDefinition<JobLockProvider & OperatorLockProvider>;

const entryTypes = (history: readonly HistoryEntry[]) => history.map((entry) => entry.type);

/** A node that runs no job yet. */
const NODE: ClusterNode = {
  node: '',
  version: '1',
  startedAt: new Date(0),
  lastSeen: new Date(0),
  jobs: [],
  elections: [],
};

/** What operators read of a lock: its holder, since when, time left, token and pause; one lock, or the cluster's. */
export const lockStateChecks: Check[] = [
  {
    name: "reads a held plain lock's holder and token, as an election's term",
    async run({ connect, other }) {
      const node = await connect('leading-node');
      const name = uniqueLockName('plain-state');
      const lock = await node.lock(lockConfig(name, 60_000));
      assert.ok(lock, 'a free plain lock');
      const { holder, fencingToken } = await other.operatorProvider().lockState(name);
      assert.equal(holder?.node, 'leading-node');
      assert.equal(fencingToken, lock.fencingToken, "the holder's fencing token");
      await lock.unlock();
    },
  },
  {
    name: "reads a held job lock's holder, since, time left and token; force-unlock of a free lock records nothing",
    async run({ connect, other }) {
      const node = await connect('holding-node');
      const operators = other.operatorProvider();
      const name = uniqueLockName('state');
      const before = Date.now();
      const lock = won(await node.lockJob(lockConfig(name, 60_000), false), 'a free job lock');
      const { holder, fencingToken } = await operators.lockState(name);
      assert.equal(holder?.node, 'holding-node');
      const since = holder.since.getTime();
      assert.ok(since >= before - 1_000 && since <= Date.now() + 1_000, `since ${holder.since.toISOString()}`);
      assert.ok(holder.ttl > 50_000 && holder.ttl <= 60_000, `ttl ${holder.ttl} of a 60 s lock`);
      assert.equal(fencingToken, lock.fencingToken, "the holder's fencing token");
      await lock.unlock();
      assert.equal((await operators.lockState(name)).holder, null, 'the holder after unlock()');
      assert.equal(await operators.unlock(name, { actor: 'carol', reason: 'just in case' }), undefined);
      assert.deepEqual(await operators.history(name, 10), [], 'the history after force-unlock of a free lock');
    },
  },
  {
    name: 'reads the nodes, the jobs they run and their locks and newest history at once, as each is read alone',
    async run({ connect, other }) {
      const node = await connect('reading-node');
      const operators = other.operatorProvider();
      const [held, ran, untouched, unrun] = ['held', 'ran', 'untouched', 'unrun'].map((prefix) =>
        uniqueLockName(prefix),
      );
      const lock = won(await node.lockJob(lockConfig(held, 60_000), false), 'a free job lock');
      const run = won(await node.lockJob(lockConfig(ran), false), 'another free job lock');
      await run.finish!('succeeded', { startedAt: new Date(), durationMs: 1, attempt: 1 });
      await operators.pause(ran, { actor: 'dave', reason: 'reading' });
      const entries = [held, ran, untouched, unrun].map((lockName) => catalogueEntry(`${lockName}-job`, lockName));
      // Seen two hours ago: gone for the console, and forgotten by the next forgetNodes().
      const watcher = { ...NODE, node: uniqueLockName('watcher'), lastSeen: new Date(Date.now() - 7_200_000) };
      await operators.publish(
        { ...watcher, jobs: entries.slice(0, 3).map((entry) => entry.jobName) },
        entries,
        new Map(),
        {
          lease: 1,
          unhealthy: {},
        },
      );

      const { nodes, jobs, readings } = await operators.clusterReading(1);
      const read = nodes.find((found) => found.node === watcher.node);
      assert.deepEqual(read, { ...watcher, jobs: entries.slice(0, 3).map((entry) => entry.jobName) }, 'the node');
      const names = new Set(entries.map((entry) => entry.jobName));
      const mine = jobs.filter((job) => names.has(job.jobName));
      const byName = (a: CatalogueJob, b: CatalogueJob) => a.jobName.localeCompare(b.jobName);
      assert.deepEqual(mine.sort(byName), entries.slice(0, 3).sort(byName), 'the jobs a node runs, and no other');
      assert.ok(
        jobs.every((job) => readings.has(job.lockName)),
        'a reading per job',
      );
      assert.ok(!readings.has(unrun), 'the reading of a job no node runs');
      const heldReading = readings.get(held)!;
      assert.equal(heldReading.lock.holder?.node, 'reading-node');
      assert.ok(heldReading.lock.holder.ttl > 50_000 && heldReading.lock.holder.ttl <= 60_000, 'the time left');
      assert.equal(heldReading.lock.fencingToken, lock.fencingToken, "the holder's fencing token");
      assert.deepEqual(heldReading.lock.holder.since, (await operators.lockState(held)).holder?.since, 'since');
      assert.deepEqual(heldReading.recent, [], 'a lock held, its run not ended yet');
      const ranReading = readings.get(ran)!;
      assert.deepEqual(ranReading.lock, await operators.lockState(ran), 'a paused free lock');
      assert.equal(ranReading.lock.paused?.actor, 'dave');
      assert.deepEqual(ranReading.recent, await operators.history(ran, 1), 'the newest entry alone (limit 1)');
      assert.deepEqual(entryTypes(ranReading.recent), ['pause']);
      const { lock: free, recent } = readings.get(untouched)!;
      assert.deepEqual([free.holder, free.fencingToken, free.paused, recent], [null, null, null, []]);
      const { readings: more } = await operators.clusterReading(10);
      assert.deepEqual(entryTypes(more.get(ran)!.recent), ['pause', 'run'], 'limit 10');
      await lock.unlock();
    },
  },
];
