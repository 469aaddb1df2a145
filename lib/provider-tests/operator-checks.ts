import { strict as assert } from 'node:assert';
import type { HistoryEntry, RunHistoryEntry } from '../operators/cluster-records.js';
import type { JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';
import { won } from './job-lock-checks.js';
import { lockConfig, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';

type Check = CheckDefinition<JobLockProvider & OperatorLockProvider>;

/** An hour, in ms: nodes last seen longer ago than this are forgotten in the check that forgets nodes. */
const HOUR = 3_600_000;

/** How many operators ask for a run of one job at once in the trigger check. */
const OPERATORS = 20;

const entryTypes = (history: readonly HistoryEntry[]) => history.map((entry) => entry.type);

/**
 * The operator store beside the locks (`operatorProvider()` with `lockJob()`): a job's history of runs and
 * operator actions, pause and resume, triggers (run now) and their results, force-unlock, nodes and skip counts.
 */
export const operatorChecks: Check[] = [
  {
    name: "keeps a job's history newest first: its runs (node, outcome, error, token, attempt), pause, resume",
    async run({ connect, other }) {
      const node = await connect('history-node');
      const operators = other.operatorProvider();
      const name = uniqueLockName('history');
      const startedAt = Date.now();
      const lock = won(await node.lockJob(lockConfig(name), false), 'a free job lock');
      // finish() records the run and releases the lock, as the executor's release does.
      await lock.finish!('failed', { startedAt, durationMs: 5, error: 'boom: the ledger is locked', attempt: 1 });
      assert.equal(await operators.pause(name, { actor: 'alice', reason: 'ledger maintenance' }), true);
      assert.equal(await operators.pause(name, { actor: 'bob' }), false, 'pause() of a paused job');
      const { paused } = await operators.lockState(name);
      assert.deepEqual(paused && [paused.actor, paused.reason], ['alice', 'ledger maintenance'], 'the pause read');
      assert.equal(await operators.resume(name, { actor: 'alice' }), true);
      assert.equal(await operators.resume(name, { actor: 'bob' }), false, 'resume() of a running job');
      assert.equal((await operators.lockState(name)).paused, undefined, 'the pause after resume');

      const history = await operators.history(name, 10);
      assert.deepEqual(entryTypes(history), ['resume', 'pause', 'run']);
      const [resume, pause, run] = history as [HistoryEntry, HistoryEntry, RunHistoryEntry];
      assert.deepEqual(
        [resume, pause].map((entry) => 'actor' in entry && entry.actor),
        ['alice', 'alice'],
      );
      assert.equal('reason' in pause && pause.reason, 'ledger maintenance');
      const { node: ranOn, outcome, error, attempt, finishedAt } = run;
      assert.deepEqual(
        { ranOn, outcome, error, attempt },
        {
          ranOn: 'history-node',
          outcome: 'failed',
          error: 'boom: the ledger is locked',
          attempt: 1,
        },
      );
      assert.equal(run.startedAt, startedAt, 'the run as its node started it');
      assert.ok(finishedAt !== undefined && finishedAt >= startedAt, `finishedAt ${finishedAt}`);
      if (run.fencingToken !== undefined) assert.ok(run.fencingToken > 0, `fencing token ${run.fencingToken}`);
      assert.deepEqual(entryTypes(await operators.history(name, 1)), ['resume'], 'history(name, 1)');
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
      assert.ok(holder.since >= before - 1_000 && holder.since <= Date.now() + 1_000, `since ${holder.since}`);
      assert.ok(holder.ttl > 50_000 && holder.ttl <= 60_000, `ttl ${holder.ttl} of a 60 s lock`);
      assert.equal(fencingToken, lock.fencingToken, "the holder's fencing token");
      await lock.unlock();
      assert.equal((await operators.lockState(name)).holder, undefined, 'the holder after unlock()');
      assert.equal(await operators.unlock(name, { actor: 'carol', reason: 'just in case' }), undefined);
      assert.deepEqual(await operators.history(name, 10), [], 'the history after force-unlock of a free lock');
    },
  },
  {
    name: "reads many locks' states and newest history at once, as lockState() and history() read each",
    async run({ connect, other }) {
      const node = await connect('reading-node');
      const operators = other.operatorProvider();
      const [held, ran, untouched] = ['held', 'ran', 'untouched'].map((prefix) => uniqueLockName(prefix));
      const lock = won(await node.lockJob(lockConfig(held, 60_000), false), 'a free job lock');
      const run = won(await node.lockJob(lockConfig(ran), false), 'another free job lock');
      await run.finish!('succeeded', { startedAt: Date.now(), durationMs: 1, attempt: 1 });
      await operators.pause(ran, { actor: 'dave', reason: 'reading' });

      const readings = await operators.lockReadings([held, ran, untouched], 1);
      assert.deepEqual([...readings.keys()].sort(), [held, ran, untouched].sort(), 'one reading per lock name');
      const heldReading = readings.get(held)!;
      assert.equal(heldReading.lock.holder?.node, 'reading-node');
      assert.ok(heldReading.lock.holder.ttl > 50_000 && heldReading.lock.holder.ttl <= 60_000, 'the time left');
      assert.equal(heldReading.lock.fencingToken, lock.fencingToken, "the holder's fencing token");
      assert.equal(heldReading.lock.holder.since, (await operators.lockState(held)).holder?.since, 'since');
      assert.deepEqual(heldReading.recent, [], 'a lock held, its run not ended yet');
      const ranReading = readings.get(ran)!;
      assert.deepEqual(ranReading.lock, await operators.lockState(ran), 'a paused free lock');
      assert.equal(ranReading.lock.paused?.actor, 'dave');
      assert.deepEqual(ranReading.recent, await operators.history(ran, 1), 'the newest entry alone (limit 1)');
      assert.deepEqual(entryTypes(ranReading.recent), ['pause']);
      const { lock: free, recent } = readings.get(untouched)!;
      assert.deepEqual([free.holder, free.fencingToken, free.paused, recent], [undefined, undefined, undefined, []]);
      assert.deepEqual(
        entryTypes((await operators.lockReadings([ran], 10)).get(ran)!.recent),
        ['pause', 'run'],
        'limit 10',
      );
      assert.equal((await operators.lockReadings([], 10)).size, 0, 'no lock name');
      await lock.unlock();
    },
  },
  {
    name: 'queues one trigger per job however many operators ask at once; exactly one node takes it',
    async run({ provider, other }) {
      const [job, lockName] = [uniqueLockName('trigger'), uniqueLockName('trigger-lock')];
      const nodes = [provider, other];
      const asked = await Promise.all(
        Array.from({ length: OPERATORS }, (_, index) =>
          nodes[index % 2].operatorProvider().requestTrigger(job, lockName, { actor: `operator-${index}` }),
        ),
      );
      const queued = asked.filter((answer) => answer.queued);
      assert.equal(queued.length, 1, `${queued.length} of ${OPERATORS} triggers queued`);
      const [{ request }] = queued;
      assert.equal(request.jobName, job);
      const named = new Set(asked.map((answer) => answer.request.id));
      assert.deepEqual([...named], [request.id], 'the triggers the answers name');

      const jobs = new Set([job]);
      const taken = await Promise.all(nodes.map((node) => node.operatorProvider().takeTriggers(jobs)));
      assert.deepEqual(
        taken.flat().map(({ id, jobName, actor }) => ({ id, jobName, actor })),
        [{ id: request.id, jobName: job, actor: request.actor }],
        'the triggers the two nodes took',
      );
      assert.deepEqual(await provider.operatorProvider().takeTriggers(jobs), [], 'a trigger taken twice');
      const triggers = (await other.operatorProvider().history(lockName, 10)).filter(
        (entry) => entry.type === 'trigger',
      );
      assert.deepEqual(
        triggers.map((entry) => 'actor' in entry && entry.actor),
        [request.actor],
        'the trigger entries of the history',
      );

      assert.equal(await other.operatorProvider().triggerResult(request.id), undefined, 'a result before the report');
      const result = { node: 'taking-node', state: 'started' } as const;
      await provider.operatorProvider().reportTrigger(request.id, result);
      assert.deepEqual(await other.operatorProvider().triggerResult(request.id), result);
      const next = await other.operatorProvider().requestTrigger(job, lockName, { actor: 'late-operator' });
      assert.ok(next.queued && next.request.id !== request.id, 'a trigger after the taken one is queued afresh');
    },
  },
  {
    name: 'withdraws a trigger no node took, by its id; never one a node took, nor the next one in its place',
    async run({ provider, other }) {
      const [job, lockName] = [uniqueLockName('withdraw'), uniqueLockName('withdraw-lock')];
      const operators = provider.operatorProvider();
      const { request: withdrawn } = await operators.requestTrigger(job, lockName, { actor: 'dave' });
      assert.equal(await other.operatorProvider().withdrawTrigger(job, withdrawn.id), true);
      const { request: next, queued } = await operators.requestTrigger(job, lockName, { actor: 'erin' });
      assert.equal(queued, true, 'a trigger after a withdrawn one is queued, not refused as pending');
      assert.equal(await operators.withdrawTrigger(job, withdrawn.id), false, 'the withdrawn trigger again');
      const taken = await other.operatorProvider().takeTriggers(new Set([job]));
      assert.deepEqual(
        taken.map(({ id }) => id),
        [next.id],
        'the triggers a node took',
      );
      assert.equal(await operators.withdrawTrigger(job, next.id), false, 'a trigger a node took');
    },
  },
  {
    name: "publishes nodes and their jobs' catalogue, and forgets the nodes not seen since a cutoff",
    async run({ provider, other }) {
      const [live, gone, job] = [uniqueLockName('live-node'), uniqueLockName('gone-node'), uniqueLockName('job')];
      const now = Date.now();
      const node = (node: string, lastSeen: number) => ({
        node,
        version: '1',
        startedAt: 0,
        lastSeen,
        jobs: [job],
        elections: ['feed'],
      });
      const entry = {
        jobName: job,
        lockName: `${job}-lock`,
        kind: 'cron',
        schedule: '0 0 0 29 2 *',
        lockAtMostFor: 60_000,
        lockAtLeastFor: 0,
        occurrence: true,
      } as const;
      await provider.operatorProvider().publish(node(gone, now - 2 * HOUR), [entry]);
      await other.operatorProvider().publish(node(live, now), []);
      const operators = other.operatorProvider();
      const mine = async () => (await operators.nodes()).filter(({ node }) => [live, gone].includes(node));
      assert.deepEqual((await mine()).map(({ node }) => node).sort(), [gone, live].sort());
      const published = (await mine()).find(({ node }) => node === live);
      assert.deepEqual(published?.elections, ['feed'], "the node's elections");
      assert.deepEqual(await operators.job(job), entry, 'the catalogue entry');
      assert.ok(
        (await operators.jobs()).some((found) => found.jobName === job),
        'jobs() lacks the entry',
      );
      assert.equal(await operators.job(uniqueLockName('no-such-job')), undefined);

      assert.ok((await provider.operatorProvider().forgetNodes(now - HOUR)) >= 1, 'forgetNodes() forgot none');
      assert.deepEqual(
        (await mine()).map(({ node }) => node),
        [live],
      );
    },
  },
  {
    name: 'adds up the skips each node counts, per lock and reason',
    async run({ provider, other }) {
      const name = uniqueLockName('skips');
      await Promise.all([
        provider.operatorProvider().addSkips(new Map([[name, new Map([['paused', 2]])]])),
        other.operatorProvider().addSkips(
          new Map([
            [
              name,
              new Map([
                ['paused', 1],
                ['locked', 4],
              ]),
            ],
          ]),
        ),
      ]);
      assert.deepEqual({ ...(await provider.operatorProvider().skips()).get(name) }, { paused: 3, locked: 4 });
    },
  },
];
