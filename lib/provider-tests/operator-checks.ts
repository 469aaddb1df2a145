import { strict as assert } from 'node:assert';
import type { SkipReason } from '../core/task/task-result.js';
import type { HistoryEntry, RunHistoryEntry } from '../operators/cluster-records.js';
import type { JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';
import { won } from './job-lock-checks.js';
import { catalogueEntry, lockConfig, uniqueLockName } from './lock-probes.js';
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
      const startedAt = new Date();
      const lock = won(await node.lockJob(lockConfig(name), false), 'a free job lock');
      // finish() records the run and releases the lock, as the executor's release does.
      await lock.finish!('failed', { startedAt, durationMs: 5, error: 'boom: the ledger is locked', attempt: 1 });
      assert.equal(await operators.pause(name, { actor: 'alice', reason: 'ledger maintenance' }), true);
      assert.equal(await operators.pause(name, { actor: 'bob' }), false, 'pause() of a paused job');
      const { paused } = await operators.lockState(name);
      assert.deepEqual(paused && [paused.actor, paused.reason], ['alice', 'ledger maintenance'], 'the pause read');
      assert.ok(paused?.at instanceof Date, `the pause's time ${String(paused?.at)} is no Date`);
      assert.equal(await operators.resume(name, { actor: 'alice' }), true);
      assert.equal(await operators.resume(name, { actor: 'bob' }), false, 'resume() of a running job');
      assert.equal((await operators.lockState(name)).paused, null, 'the pause after resume');

      const history = await operators.history(name, 10);
      assert.deepEqual(entryTypes(history), ['resume', 'pause', 'run']);
      const [resume, pause, run] = history as [HistoryEntry, HistoryEntry, RunHistoryEntry];
      assert.deepEqual(
        [resume, pause].map((entry) => 'actor' in entry && entry.actor),
        ['alice', 'alice'],
      );
      assert.deepEqual(
        [resume, pause].map((entry) => 'at' in entry && entry.at >= startedAt),
        [true, true],
        'operator entries read with their time as a Date',
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
      assert.deepEqual(run.startedAt, startedAt, 'the run as its node started it, a Date');
      assert.deepEqual(finishedAt, new Date(startedAt.getTime() + 5), 'finishedAt: startedAt plus the duration');
      if (run.fencingToken !== null) assert.ok(run.fencingToken > 0, `fencing token ${run.fencingToken}`);
      assert.deepEqual(entryTypes(await operators.history(name, 1)), ['resume'], 'history(name, 1)');
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
      assert.ok(
        asked.every((answer) => answer.request.at.getTime() === request.at.getTime()),
        'the pending trigger read back, its time a Date',
      );

      const jobs = new Set([job]);
      const taken = await Promise.all(nodes.map((node) => node.operatorProvider().takeTriggers(jobs)));
      assert.deepEqual(
        taken.flat().map(({ id, jobName, actor, at }) => ({ id, jobName, actor, at })),
        [{ id: request.id, jobName: job, actor: request.actor, at: request.at }],
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
      const result = { node: 'taking-node', state: 'started', reason: null } as const;
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
        startedAt: new Date(0),
        lastSeen: new Date(lastSeen),
        jobs: [job],
        elections: ['feed'],
      });
      const entry = catalogueEntry(job, `${job}-lock`);
      await provider
        .operatorProvider()
        .publish(node(gone, now - 2 * HOUR), [entry], new Map(), { lease: 1, unhealthy: {} });
      await other.operatorProvider().publish(node(live, now), [], new Map(), { lease: 1, unhealthy: {} });
      const operators = other.operatorProvider();
      const mine = async () => (await operators.nodes()).filter(({ node }) => [live, gone].includes(node));
      assert.deepEqual((await mine()).map(({ node }) => node).sort(), [gone, live].sort());
      const read = (await mine()).find((found) => found.node === live);
      assert.deepEqual(read, node(live, now), 'a node read back, its times as Dates and its elections');
      assert.deepEqual(await operators.job(job), entry, 'the catalogue entry');
      assert.ok(
        (await operators.jobs()).some((found) => found.jobName === job),
        'jobs() lacks the entry',
      );
      assert.equal(await operators.job(uniqueLockName('no-such-job')), undefined);

      assert.ok(
        (await provider.operatorProvider().forgetNodes(new Date(now - HOUR))) >= 1,
        'forgetNodes() forgot none',
      );
      assert.deepEqual(
        (await mine()).map(({ node }) => node),
        [live],
      );
    },
  },
  {
    name: 'adds up the skips each node sends with its heartbeat, per lock and reason',
    async run({ provider, other }) {
      const [first, second] = [uniqueLockName('skips'), uniqueLockName('skips')];
      const heartbeat = (store: OperatorLockProvider, skips: Record<string, Partial<Record<SkipReason, number>>>) => {
        const node = uniqueLockName('skipping-node');
        const at = new Date();
        const record = { node, version: '1', startedAt: at, lastSeen: at, jobs: [], elections: [] };
        const counts = Object.entries(skips).map(([lock, reasons]) => [lock, new Map(Object.entries(reasons))]);
        const bid = { lease: 1, unhealthy: {} };
        return store
          .operatorProvider()
          .publish(record, [], new Map(counts as [string, Map<SkipReason, number>][]), bid);
      };
      // Sent at once: each bid may win or lose the turn, and its skips count either way.
      await Promise.all([
        heartbeat(provider, { [first]: { paused: 2 } }),
        heartbeat(other, { [first]: { paused: 1, locked: 4 }, [second]: { 'already-ran': 1 } }),
        heartbeat(other, {}),
      ]);
      await heartbeat(provider, { [second]: { 'already-ran': 2 } });
      const counts = await other.operatorProvider().skips();
      assert.deepEqual({ ...counts.get(first) }, { paused: 3, locked: 4 });
      assert.deepEqual({ ...counts.get(second) }, { 'already-ran': 3 });
    },
  },
];
