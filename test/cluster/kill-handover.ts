import type { ScenarioLockOptions, StartMessage, WorkerJobSpec } from './fixtures/worker-protocol.js';
import { isStartOf } from './message-matchers.js';
import type { WorkerCluster } from './worker-cluster.js';

/** A job ticking every `tickMs` whose runs take a minute, longer than any test: only a kill ends one. */
export function endlessJob(name: string, tickMs: number, lock: ScenarioLockOptions): WorkerJobSpec {
  return { name, schedule: { intervalMs: tickMs }, ...lock, runForMs: 60_000 };
}

/** Kills -9 the worker running `first`, then waits up to `timeoutMs` for the next run of its job, anywhere. */
export async function runAfterKill(
  workers: WorkerCluster,
  first: StartMessage,
  timeoutMs: number,
): Promise<StartMessage> {
  await workers.kill(first.instance);
  return workers.waitFor(
    isStartOf(first.job, (start) => start.runId !== first.runId),
    timeoutMs,
    'a run after the kill',
  );
}
