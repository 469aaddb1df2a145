import { strict as assert } from 'node:assert';
import type { OperatorLockProvider } from '../operators/operator-abilities.js';
import type { ClusterNode } from '../operators/cluster-records.js';
import type { HealthReportKind, HealthTurn, OperatorProvider, UnhealthyJobs } from '../operators/operator-provider.js';
import { uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';
import { pollUntil, sleepUntil } from './timing.js';

/** Three occurrences of a job two seconds apart, as a job down for six seconds missed them. */
const MISSED = [0, 2_000, 4_000].map((offset) => new Date(Date.UTC(2026, 0, 1) + offset));

/** How long the health turn check's bids hold the turn (ms): longer than two rounds of bids take. */
const TURN_LEASE = 2_000;

/** A heartbeat of node `node`, running no job. */
function heartbeat(node: string): ClusterNode {
  const now = new Date();
  return { node, version: '1', startedAt: now, lastSeen: now, jobs: [], elections: [] };
}

/** `claimHealthReports()` of the `kind` reports at `times` of one job: the times claimed. */
async function claim(store: OperatorProvider, lockName: string, kind: HealthReportKind, times: readonly Date[]) {
  const claimed = await store.claimHealthReports(times.map((at) => ({ lockName, kind, at })));
  return claimed.map((report) => report.at);
}

/**
 * `claimHealthReports()`: a missed occurrence, or a failing streak, is reported by one node of the cluster; and the
 * health turn of `publish()`: one node at a time reads the cluster's health.
 */
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
  {
    name: 'gives the health turn to one of several nodes at once, and to another once its holder stops',
    async run({ provider, other, connect, clockTolerance, clock }) {
      const stores = [provider, other, await connect()].map((node) => node.operatorProvider());
      const names = stores.map(() => uniqueLockName('turn-node'));
      const job = uniqueLockName('job');
      const bid = (index: number, lease: number, unhealthy: UnhealthyJobs = {}) =>
        stores[index].publish(heartbeat(names[index]), [], new Map(), { lease, unhealthy });
      const holders = (turns: readonly (HealthTurn | null)[]) => turns.flatMap((turn, index) => (turn ? [index] : []));
      // An app of another check on the store may hold the turn for a while: its nodes bid until one of them has it.
      const deadline = clock.now() + 20_000;
      const { value: first } = await pollUntil(
        clock,
        async () => {
          const turns = await Promise.all(stores.map((_, index) => bid(index, TURN_LEASE)));
          return holders(turns).length > 0 ? turns : undefined;
        },
        deadline,
        100,
        'a node with the turn',
      );
      assert.equal(holders(first).length, 1, `nodes ${holders(first).join(', ')} hold the turn at once`);
      const [holder] = holders(first);
      assert.equal(first[holder]!.taken, true, 'a turn taken');

      // Its next bid keeps the turn and leaves its unhealthy jobs; the others still get none.
      const kept = await Promise.all(stores.map((_, index) => bid(index, TURN_LEASE, { [job]: 'failing' })));
      const keptAt = clock.now();
      assert.deepEqual(holders(kept), [holder], 'the holders of the second bids');
      assert.deepEqual(kept[holder], { taken: false, unhealthy: { [job]: 'failing' } }, 'a turn kept');

      // The holder stops: once its lease ran out, one of the others takes the turn, with what the holder left.
      await sleepUntil(clock, keptAt + TURN_LEASE + clockTolerance);
      const rest = [0, 1, 2].filter((index) => index !== holder);
      const next = await Promise.all(rest.map((index) => bid(index, TURN_LEASE)));
      const nextHolders = holders(next).map((position) => rest[position]);
      assert.equal(nextHolders.length, 1, `nodes ${nextHolders.join(', ')} took the turn at once`);
      assert.deepEqual(next[rest.indexOf(nextHolders[0])], { taken: true, unhealthy: { [job]: 'failing' } });

      // A lease of 0 hands it back at once: the last node takes it at its next bid.
      const [last] = rest.filter((index) => index !== nextHolders[0]);
      assert.ok(await bid(nextHolders[0], 0, {}), 'the holder handing the turn back');
      assert.deepEqual(await bid(last, TURN_LEASE), { taken: true, unhealthy: {} }, 'the turn handed back, taken');
    },
  },
];
