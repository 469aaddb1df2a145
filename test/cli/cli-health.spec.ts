import { jest } from '@jest/globals';
import { parseInvocation, type Invocation } from '../../lib/cli/arguments.js';
import { runCommand } from '../../lib/cli/commands.js';
import { ClusterAdmin } from '../../lib/operators/cluster-admin.js';
import { ElectionAdmin } from '../../lib/operators/election-admin.js';
import type { CatalogueJob, RunHistoryEntry } from '../../lib/operators/cluster-records.js';
import { InMemoryLockProvider } from '../../lib/providers/in-memory/in-memory-lock-provider.js';
import type { InMemoryOperatorProvider } from '../../lib/providers/in-memory/in-memory-operator-provider.js';

const T0 = Date.parse('2027-01-01T00:00:00Z');
const JOB: CatalogueJob = {
  jobName: 'every-2s',
  lockName: 'every-2s',
  kind: 'cron',
  schedule: '*/2 * * * * *',
  lockAtMostFor: 60_000,
  lockAtLeastFor: 0,
  occurrence: true,
  timeZone: null,
  lease: null,
};

function ran(second: number, outcome: RunHistoryEntry['outcome'] = 'succeeded'): RunHistoryEntry {
  const occurrence = T0 + second * 1_000;
  return {
    type: 'run',
    occurrence: new Date(occurrence),
    node: 'node-1',
    startedAt: new Date(occurrence + 5),
    finishedAt: null,
    durationMs: null,
    outcome,
    error: null,
    fencingToken: null,
    attempt: 1,
    manual: null,
  };
}

let store: InMemoryOperatorProvider;
/** `health` as the CLI runs it against the store, with the apps' grace of 500 ms. */
async function health(): Promise<{ failure?: string; text: string; json: unknown }> {
  const invocation = parseInvocation(['health', '--redis', 'localhost:6379', '--grace', '500ms'], {});
  const { heartbeatInterval, health: policy } = invocation as Invocation;
  const admin = new ClusterAdmin(store, heartbeatInterval, policy);
  return runCommand(admin, new ElectionAdmin(store, admin), invocation as Invocation, 'key prefix "t:"');
}

beforeEach(async () => {
  jest.useFakeTimers({ now: T0 - 100 });
  store = new InMemoryLockProvider({ node: 'node-1' }).operatorProvider() as InMemoryOperatorProvider;
  const at = new Date(T0 - 100);
  const node = { node: 'node-1', version: '1', startedAt: at, lastSeen: at, jobs: [JOB.jobName], elections: [] };
  await store.publish(node, [JOB], new Map(), { lease: 1, unhealthy: {} });
});
afterEach(() => jest.useRealTimers());

describe('nest-scheduler-lock health: a probe exit code', () => {
  it('fails (exit code 1) while a job missed occurrences, lists their times, and passes once it runs again', async () => {
    store.record(JOB.lockName, ran(0));
    jest.setSystemTime(T0 + 1_000);
    expect((await health()).failure).toBeUndefined();

    jest.setSystemTime(T0 + 6_100);
    const down = await health();
    expect(down.failure).toBe('unhealthy: every-2s');
    expect(down.text).toMatch(/every-2s\s+missed\s+6.1s ago\s+2027-01-01T00:00:02.000Z, 2027-01-01T00:00:04.000Z/);

    store.record(JOB.lockName, ran(6));
    expect((await health()).failure).toBeUndefined();
  });

  it('leaves out a job no known node runs: one removed from the code, once its nodes are forgotten', async () => {
    const at = new Date(T0 - 100);
    await store.publish(
      { node: 'old', version: '1', startedAt: at, lastSeen: at, jobs: [], elections: [] },
      [{ ...JOB, jobName: 'removed', lockName: 'removed' }],
      new Map(),
      { lease: 1, unhealthy: {} },
    );
    jest.setSystemTime(T0 + 60_000);
    expect(((await health()).json as { jobName: string }[]).map((job) => job.jobName)).toEqual(['every-2s']);
  });

  it('fails for a failing job, and refuses a bad --grace or --failing-after as a usage error', async () => {
    for (const second of [0, 2, 4]) store.record(JOB.lockName, ran(second, 'failed'));
    jest.setSystemTime(T0 + 5_000);
    expect(await health()).toMatchObject({ failure: 'unhealthy: every-2s' });
    expect(() => parseInvocation(['health', '--grace', 'soon'], { REDIS_URL: 'localhost' })).toThrow(
      '--grace must be a duration',
    );
    expect(() => parseInvocation(['health', '--failing-after', '0'], { REDIS_URL: 'localhost' })).toThrow(
      '--failing-after must be',
    );
  });
});
