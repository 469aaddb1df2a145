import type { ClusterAdmin, TriggerOutcome } from '../operators/cluster-admin.js';
import type { Command, Invocation } from './arguments.js';
import type { ElectionAdmin, StepDownOutcome } from '../operators/election-admin.js';
import { electionsView, electionView, healthView, historyView, jobsView, jobView, nodesView } from './views.js';

/** What a command found or did, for people and for `--json`. */
export interface CommandResult {
  /** What `--json` prints on stdout. */
  readonly json: unknown;
  /** What is printed for people on stdout. */
  readonly text: string;
  /** Why the command did not do what it was asked, printed on stderr: exit code 1. */
  readonly failure?: string;
}

/** How long `trigger` waits for a node to take the run. */
const TRIGGER_WAIT_MS = 5_000;

/** Runs `command` against the cluster `admin` sees; `scope` says where in the store, e.g. `key prefix "nsl:"`. */
export async function runCommand(
  admin: ClusterAdmin,
  elections: ElectionAdmin,
  invocation: Invocation,
  scope: string,
): Promise<CommandResult> {
  const command: Command = invocation.command;
  const now = () => Date.now();
  switch (command.name) {
    case 'jobs': {
      const [jobs, healths] = await Promise.all([admin.listJobs(), admin.listHealth()]);
      const none = `No live node runs a locked job under the ${scope}.`;
      const states = new Map(healths.map((health) => [health.jobName, health.state]));
      return { json: jobs, text: jobs.length > 0 ? jobsView(jobs, states, now()) : none };
    }
    case 'health': {
      const healths = await admin.listHealth();
      const unhealthy = healths.filter((health) => health.unhealthy).map((health) => health.jobName);
      const none = `No node published a locked job under the ${scope}.`;
      const failure = unhealthy.length > 0 ? `unhealthy: ${unhealthy.join(', ')}` : undefined;
      return { json: healths, text: healths.length > 0 ? healthView(healths, now()) : none, failure };
    }
    case 'nodes': {
      const nodes = await admin.listNodes();
      const none = `No live node under the ${scope}.`;
      return { json: nodes, text: nodes.length > 0 ? nodesView(nodes, now()) : none };
    }
    case 'job': {
      const job = await admin.getJob(command.job);
      return { json: job, text: jobView(job, now()) };
    }
    case 'history': {
      const entries = await admin.history(command.job, invocation.limit);
      return {
        json: entries,
        text: entries.length > 0 ? historyView(entries, now()) : `${command.job} has no history yet.`,
      };
    }
    case 'pause': {
      const changed = await admin.pause(command.job, command.note);
      const text = changed
        ? `Paused ${command.job}: every node skips its ticks until resume; a run in progress goes on.`
        : `${command.job} was paused already.`;
      return { json: { job: command.job, action: 'pause', changed, ...command.note }, text };
    }
    case 'resume': {
      const changed = await admin.resume(command.job, command.note);
      const text = changed ? `Resumed ${command.job}.` : `${command.job} was not paused.`;
      return { json: { job: command.job, action: 'resume', changed, ...command.note }, text };
    }
    case 'trigger':
      return triggered(command.job, await admin.trigger(command.job, command.note, TRIGGER_WAIT_MS));
    case 'election': {
      const election = await elections.election(command.job);
      return { json: election, text: electionView(election, now()) };
    }
    case 'elections': {
      const all = await elections.listElections();
      const none = `No live node under the ${scope} takes part in an election.`;
      return { json: all, text: all.length > 0 ? electionsView(all, now()) : none };
    }
    case 'step-down':
      return steppedDown(command.job, await elections.stepDown(command.job, command.note, TRIGGER_WAIT_MS));
    case 'unlock': {
      const { formerNode } = await admin.unlock(command.job, command.note);
      const text = formerNode
        ? `Unlocked ${command.job}: the run on ${formerNode} sees its lock lost (not-owner) ` +
          'at its next renewal or release.'
        : `${command.job} was not locked.`;
      return { json: { job: command.job, action: 'unlock', formerNode, ...command.note }, text };
    }
  }
}

function steppedDown(election: string, outcome: StepDownOutcome): CommandResult {
  const json = { election, ...outcome };
  if (outcome.steppedDown) {
    return { json, text: `${outcome.formerLeader} stepped down from ${election}: another node leads next.` };
  }
  const why = {
    'no-leader': 'no node leads it',
    pending: 'a step-down of it is pending',
    'not-taken': `its leader did not take the request within ${TRIGGER_WAIT_MS / 1_000}s; it is withdrawn`,
    'not-leader': 'the node that took the request no longer led it',
  }[outcome.reason];
  return { json, text: '', failure: `${election} did not step down: ${why}` };
}

function triggered(job: string, outcome: TriggerOutcome): CommandResult {
  const json = { job, ...outcome };
  if (outcome.triggered) {
    return { json, text: `Triggered ${job}: running on ${outcome.result.node} (trigger ${outcome.id}).` };
  }
  return { json, text: '', failure: notTriggered(job, outcome) };
}

/** Why a trigger did not start a run, for the operator who asked. */
function notTriggered(job: string, outcome: Extract<TriggerOutcome, { triggered: false }>): string {
  switch (outcome.reason) {
    case 'running':
      return `refused: ${job} is running on ${outcome.holdingNode}; trigger it again once that run has ended`;
    case 'pending':
      return `not triggered: a trigger of ${job} by ${outcome.actor} is pending (trigger ${outcome.id}); it runs once`;
    case 'skipped':
      return `${outcome.result.node} did not run ${job}: ${outcome.result.reason ?? 'skipped'} (trigger ${outcome.id})`;
    case 'not-taken':
      return (
        `no node took the run of ${job} within ${TRIGGER_WAIT_MS / 1_000}s (trigger ${outcome.id}); ` +
        'it is withdrawn and will not run'
      );
    case 'unanswered':
      return (
        `a node took the run of ${job} (trigger ${outcome.id}) but did not say within ` +
        `${TRIGGER_WAIT_MS / 1_000}s whether it started; see: history ${job}`
      );
  }
}
