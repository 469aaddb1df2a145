import { strict as assert } from 'node:assert';
import type { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import type { SchedulerLockLogger } from '../core/executor/logger.js';
import type { LeaseRenewingLockProvider } from '../core/provider/provider-abilities.js';
import type { LeaderCampaign } from '../leader/leader-campaign.js';
import type { LeaderLease } from '../leader/leader-lease.js';
import { uniqueLockName } from './lock-probes.js';
import type { CheckDefinition, KitClock } from './provider-subject.js';
import { pollUntil, sleepUntil } from './timing.js';

/** The campaigns' log lines are not what these checks are about. */
const QUIET: SchedulerLockLogger = { log() {}, warn() {}, error() {}, debug() {} };

/** A node in an election: its campaign, and each term it began, with when (`clock.now()`). */
interface Candidate {
  readonly campaign: LeaderCampaign;
  readonly executor: LockingTaskExecutor;
  readonly terms: { readonly lease: LeaderLease; readonly at: number }[];
}

/** The executor and the campaign, which load rxjs: imported by the election check, never by the rest of the kit. */
async function electionParts() {
  const { LockingTaskExecutor } = await import('../core/executor/locking-task-executor.js');
  const { LeaderCampaign } = await import('../leader/leader-campaign.js');
  return { LockingTaskExecutor, LeaderCampaign };
}

/** A candidate for `election` on `provider`; every term of every candidate goes into `all` too. */
async function candidate(
  clock: KitClock,
  provider: LeaseRenewingLockProvider,
  node: string,
  election: string,
  lease: number,
  all: LeaderLease[],
): Promise<Candidate> {
  const { LockingTaskExecutor, LeaderCampaign } = await electionParts();
  const executor = new LockingTaskExecutor(provider, { node: node, logger: QUIET });
  const terms: Candidate['terms'] = [];
  const hooks = {
    onLeadershipAcquired(lease: LeaderLease) {
      const leaders = all.filter((term) => !term.signal.aborted).map((term) => term.node);
      assert.deepEqual(leaders, [], `${node} began a term while ${leaders.join(', ')} still led`);
      all.push(lease);
      terms.push({ lease, at: clock.now() });
    },
  };
  const campaign = new LeaderCampaign(election, node, lease, hooks, provider, executor, QUIET);
  return { campaign, executor, terms };
}

/** Resolves once `node` leads, or rejects after `deadline` (a `clock.now()` value). */
function leads(clock: KitClock, node: Candidate, deadline: number, what: string) {
  return pollUntil(clock, async () => node.campaign.leading ?? undefined, deadline, 5, what);
}

/** Elections (`@LeaderElection()`) on the store: at most one leader, renewed, handed over on death and on release. */
export const leaderChecks: CheckDefinition<LeaseRenewingLockProvider>[] = [
  {
    name: 'elects one leader that keeps the lead; a killed one is replaced after its lease, a released one at once',
    async run({ provider, other, connect, shortLock, clockTolerance, clock }) {
      const lease = 12 * shortLock;
      const interval = lease / 3;
      const election = uniqueLockName('election');
      const all: LeaderLease[] = [];
      const a = await candidate(clock, provider, 'node-a', election, lease, all);
      const b = await candidate(clock, other, 'node-b', election, lease, all);
      const c = await candidate(clock, await connect(), 'node-c', election, lease, all);
      try {
        a.campaign.start();
        await leads(clock, a, clock.now() + interval, 'node-a leading');
        b.campaign.start();
        // Two leases pass: node-a renews in the store, and node-b, trying every interval, never leads.
        await sleepUntil(clock, clock.now() + 2 * lease);
        assert.notEqual(a.campaign.leading, null, 'node-a lost the lead although it renewed its lease');
        assert.equal(b.terms.length, 0, 'node-b led while node-a renewed its lease');

        const killedAt = clock.now();
        a.campaign.halt(); // as kill -9: no release, its lease expires in the store
        all.length = 0; // its process is gone: its unaborted signal leads nothing
        const { at: takenAt } = await leads(clock, b, killedAt + lease + 2 * interval, 'node-b leading after the kill');
        assert.ok(
          takenAt >= killedAt + lease - interval - clockTolerance,
          `node-b led ${Math.round(takenAt - killedAt)} ms after node-a died, before its lease could expire`,
        );
        const [first, second] = [a.terms[0].lease.fencingToken, b.terms[0].lease.fencingToken];
        if (first !== null && second !== null) assert.ok(second > first, `term tokens ${first} then ${second}`);

        c.campaign.start();
        await sleepUntil(clock, clock.now() + interval);
        const stoppedAt = clock.now();
        await b.campaign.stop(); // a clean shutdown releases the lease
        const { at: releasedTo } = await leads(
          clock,
          c,
          stoppedAt + lease - clockTolerance,
          'node-c leading after the release',
        );
        assert.ok(releasedTo - stoppedAt < lease, 'node-c waited for the released lease to expire');
        assert.equal(b.terms[0].lease.signal.aborted, true, "node-b's signal is not aborted after its shutdown");
      } finally {
        for (const node of [a, b, c]) {
          await node.campaign.stop();
          await node.executor.shutdown(0);
        }
      }
    },
  },
];
