import { strict as assert } from 'node:assert';
import type { JobRecordReader, OccurrenceLockProvider } from '../core/provider/provider-abilities.js';
import { uniqueLockName } from './lock-probes.js';
import { claimed, finish, jobConfig, NEXT_OCCURRENCE, OCCURRENCE } from './occurrence-probes.js';
import type { CheckDefinition } from './provider-subject.js';

type Check = CheckDefinition<OccurrenceLockProvider>;

/** `lockOccurrence()`: each scheduled occurrence of a job is claimed once, across nodes and after its run. */
export const occurrenceChecks: Check[] = [
  {
    name: 'claims an occurrence once: a second claim is refused as already-ran, running and then settled',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const lock = claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE));
      assert.deepEqual(await other.lockOccurrence(jobConfig(name), OCCURRENCE), {
        refused: 'already-ran',
        running: true,
      });
      await finish(lock, 'succeeded');
      // The lock is free now, but the occurrence was run: a late node must not run it again.
      const settled = { refused: 'already-ran', running: false };
      assert.deepEqual(await other.lockOccurrence(jobConfig(name), OCCURRENCE), settled);
      assert.deepEqual(
        await other.lockOccurrence(jobConfig(name), new Date(OCCURRENCE.getTime() - 10_000)),
        settled,
        'an older occurrence',
      );
      await claimed(await other.lockOccurrence(jobConfig(name), NEXT_OCCURRENCE)).unlock();
    },
  },
  {
    name: 'refuses a newer occurrence as locked while an earlier run still holds the lock',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const lock = claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE));
      assert.deepEqual(await other.lockOccurrence(jobConfig(name), NEXT_OCCURRENCE), { refused: 'locked' });
      await lock.unlock();
      await claimed(await other.lockOccurrence(jobConfig(name), NEXT_OCCURRENCE)).unlock();
    },
  },
];

/** `readJobRecord()` of a provider that claims occurrences: the record of the last claimed occurrence. */
export const jobRecordChecks: CheckDefinition<OccurrenceLockProvider & JobRecordReader>[] = [
  {
    name: 'records the run where readJobRecord() reads it: occurrence, state, attempt, held, outcome',
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      assert.equal(await provider.readJobRecord(name), undefined, 'a record before the first claim');
      const before = Date.now();
      const lock = claimed(await provider.lockOccurrence(jobConfig(name), OCCURRENCE));
      const running = await provider.readJobRecord(name);
      assert.ok(running, 'no record after a claim');
      assert.deepEqual(
        { occurrence: running.occurrence, state: running.state, attempt: running.attempt, held: running.held },
        { occurrence: OCCURRENCE, state: 'running', attempt: 1, held: true },
      );
      assert.ok(running.node.length > 0, 'the record does not name who runs it');
      await finish(lock, 'failed');
      const record = await other.readJobRecord(name);
      assert.ok(record, 'the record is gone after finish()');
      assert.deepEqual(
        { state: record.state, node: record.node, attempt: record.attempt, held: record.held },
        { state: 'failed', node: running.node, attempt: 1, held: false },
      );
      assert.ok(record.startedAt.getTime() >= before - 1_000, `startedAt ${record.startedAt.toISOString()}`);
      assert.ok(record.finishedAt && record.finishedAt >= record.startedAt, 'finishedAt missing or before startedAt');
    },
  },
];
