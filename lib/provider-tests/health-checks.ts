import { strict as assert } from 'node:assert';
import type { OperatorLockProvider } from '../operators/operator-abilities.js';
import type { HealthReportKind, OperatorProvider } from '../operators/operator-provider.js';
import { uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';

/** Three occurrences of a job two seconds apart, as a job down for six seconds missed them. */
const MISSED = [0, 2_000, 4_000].map((offset) => new Date(Date.UTC(2026, 0, 1) + offset));

/** `claimHealthReports()` of the `kind` reports at `times` of one job: the times claimed. */
async function claim(store: OperatorProvider, lockName: string, kind: HealthReportKind, times: readonly Date[]) {
  const claimed = await store.claimHealthReports(times.map((at) => ({ lockName, kind, at })));
  return claimed.map((report) => report.at);
}

/** `claimHealthReports()`: a missed occurrence, or a failing streak, is reported by one node of the cluster. */
export const healthReportChecks: CheckDefinition<OperatorLockProvider>[] = [
  {
    name: "claims each missed occurrence's report once across nodes, and each job's apart",
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const [first, second] = [provider.operatorProvider(), other.operatorProvider()];
      assert.deepEqual(await claim(first, name, 'missed', MISSED.slice(0, 2)), MISSED.slice(0, 2));
      // The other node sees the same misses, and one more: it reports only the new one.
      assert.deepEqual(await claim(second, name, 'missed', MISSED), MISSED.slice(2), 'a claimed report, again');
      assert.deepEqual(await claim(first, name, 'missed', MISSED), [], 'every report claimed already');
      assert.deepEqual(await first.claimHealthReports([]), [], 'no report');
      const otherJob = uniqueLockName('job');
      assert.deepEqual(await claim(second, otherJob, 'missed', MISSED), MISSED, "another job's misses");
    },
  },
  {
    name: 'lets one of several nodes claiming the same misses at once report each',
    async run({ provider, other, connect }) {
      const name = uniqueLockName('job');
      const nodes = [provider, other, await connect()];
      const claims = await Promise.all(nodes.map((node) => claim(node.operatorProvider(), name, 'missed', MISSED)));
      const reported = claims.flat().map((occurrence) => occurrence.getTime());
      assert.deepEqual(
        reported.sort((a, b) => a - b),
        MISSED.map((occurrence) => occurrence.getTime()),
      );
    },
  },
  {
    name: "claims a job's failing report once across nodes, apart from its missed reports",
    async run({ provider, other, connect }) {
      const name = uniqueLockName('job');
      const [since] = MISSED;
      assert.deepEqual(await claim(provider.operatorProvider(), name, 'missed', [since]), [since]);
      const nodes = [provider, other, await connect()];
      const claims = await Promise.all(nodes.map((node) => claim(node.operatorProvider(), name, 'failing', [since])));
      assert.deepEqual(claims.flat(), [since], 'one failing report, though a missed one has the same time');
      assert.deepEqual(await claim(other.operatorProvider(), name, 'failing', [since]), [], 'again');
    },
  },
  {
    name: 'claims the reports of several jobs in one call, each once, in the order asked',
    async run({ provider, other }) {
      const [a, b] = [uniqueLockName('job'), uniqueLockName('job')];
      const [first, second] = [MISSED[0], MISSED[1]];
      const claims = [
        { lockName: a, kind: 'missed' as const, at: second },
        { lockName: b, kind: 'failing' as const, at: first },
        { lockName: a, kind: 'missed' as const, at: first },
      ];
      assert.deepEqual(await provider.operatorProvider().claimHealthReports(claims.slice(1)), claims.slice(1));
      assert.deepEqual(await other.operatorProvider().claimHealthReports(claims), claims.slice(0, 1), 'one new');
      assert.deepEqual(await other.operatorProvider().claimHealthReports(claims), [], 'all claimed already');
    },
  },
];
