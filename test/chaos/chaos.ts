import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { analyze } from './analysis.js';
import { AppFleet } from './app-fleet.js';
import { ChaosUsageError, parseChaosOptions, skewsFor, type ChaosOptions } from './chaos-options.js';
import { startChaosStore } from './chaos-store.js';
import { sampleCpu } from './cpu-sampler.js';
import { ensureLibfaketime } from './faketime.js';
import { injectFault, type FaultTargets } from './fault-injector.js';
import { planFaults, RESTART_ALLOWANCE_MS, TAIL_MS, type FaultPlan } from './fault-schedule.js';
import { renderFindings } from './findings-report.js';
import { monoNow } from './mono-clock.js';
import { readRunLog, RunLog } from './run-log.js';

/**
 * `npm run chaos`: a seeded chaos soak of the BUILT package. N app processes (test/chaos/app/), each
 * under libfaketime with its own wall-clock skew and behind its own fault-injecting proxy, run the same
 * locked jobs against a private store server (`--store`: an AOF-backed redis-server, or a PostgreSQL
 * cluster of its own; chaos-store.ts); a seeded plan kills apps and the store, pauses the store and
 * partitions one app at a time; then the run log is analysed (analysis.ts) and the process exits 1 on any
 * violation (2 when the soak itself could not run).
 */

/**
 * How long after a fault ends a second of the 1 s cron may still go unrun without blame: the `tick`
 * lock taken just before or during the fault can outlive it by its lockAtMostFor (3 s, e.g. a run
 * whose release never reached the store, restored from the AOF or WAL with its expiry); a client
 * reconnects within ioredis's backoff (at most 2 s; `pg`'s pool opens a new connection at the next
 * statement); an attempt sent as the fault ends is given up after acquireTimeout (2 s). 3 + 2 + 2 = 7 s. The seconds whose timers fire on skewed apps around the fault are excused on
 * top of it (see analysis.ts).
 */
const MISS_MARGIN_MS = 7_000;
/** A fault that overran its plan still leaves this long before the next one. */
const MIN_QUIET_MS = 2_000;
const KEY_PREFIX = 'chaos';

const cleanups: Array<() => Promise<void>> = [];

async function main(): Promise<number> {
  const options = parseChaosOptions(process.argv.slice(2), process.env);
  if (options.analyze) {
    const findings = analyze(readRunLog(options.analyze));
    console.log(renderFindings(findings));
    return findings.violations === 0 ? 0 : 1;
  }
  return soak(options);
}

async function soak(options: ChaosOptions): Promise<number> {
  const { seed, seconds, store: storeKind } = options;
  console.log(
    `chaos: store=${storeKind} seed=${seed} seconds=${seconds} apps=${options.apps} ` +
      `(replay: npm run chaos -- --store ${storeKind} --seed ${seed} --seconds ${seconds} --apps ${options.apps})`,
  );
  const libfaketime = ensureLibfaketime((line) => console.log(`chaos: ${line}`));
  const apps = skewsFor(options.apps).map((skewMs, i) => ({ node: `app-${i + 1}`, skewMs }));
  const plan = planFaults({ seed, soakMs: seconds * 1000, nodes: apps.map((app) => app.node), store: storeKind });
  printPlan(plan);

  const out = options.out ? resolve(options.out) : mkdtempSync(join(tmpdir(), `nsl-chaos-${seed}-`));
  mkdirSync(out, { recursive: true });
  const log = new RunLog(join(out, 'run.jsonl'));
  cleanups.push(() => log.close());
  console.log(`chaos: run log ${log.path}`);

  const store = await startChaosStore(storeKind, (pid) => {
    log.record({ type: 'store-exit', store: storeKind, pid, mono: monoNow(), expected: false });
    console.log(`chaos: the ${storeKind} server ${pid} exited on its own`);
  });
  cleanups.push(() => store.stop());
  const fleet = await AppFleet.open({
    apps,
    libfaketime,
    store,
    keyPrefix: KEY_PREFIX,
    record: (line) => log.record(line),
    onUnexpectedExit: (node, description) => console.log(`chaos: ${node} exited on its own: ${description}`),
  });
  cleanups.push(() => fleet.stop());
  const stopCpuSampling = sampleCpu(1_000, (busyPercent) => log.record({ type: 'cpu', mono: monoNow(), busyPercent }));
  cleanups.push(async () => stopCpuSampling());

  await Promise.all(fleet.nodes.map((node) => fleet.launch(node)));
  const start = monoNow();
  log.record({
    type: 'soak',
    seed,
    seconds,
    store: storeKind,
    apps,
    wallMinusMono: Date.now() - start,
    missMarginMs: MISS_MARGIN_MS,
    mono: start,
  });
  const skews = apps.map((app) => `${app.node} ${app.skewMs >= 0 ? '+' : ''}${app.skewMs / 1000} s`).join(', ');
  console.log(`chaos: ${skews} ready; ${store.description}`);

  await runPlan(plan, start, start + seconds * 1000, { fleet, store, record: (line) => log.record(line) });
  log.record({ type: 'soak-end', mono: monoNow() });
  await runCleanups();

  const findings = analyze(log.lines);
  const report = renderFindings(findings);
  writeFileSync(join(out, 'report.md'), `${report}\n`);
  console.log(`\n${report}`);
  console.log(`(run log and report in ${out}; re-analyse with: npm run chaos -- --analyze ${log.path})`);
  return findings.violations === 0 ? 0 : 1;
}

function printPlan({ faults, quietMs: [quietMin, quietMax] }: FaultPlan): void {
  console.log(`chaos: ${faults.length} faults planned, quiet gaps ${quietMin / 1000}–${quietMax / 1000} s:`);
  for (const { atMs, kind, target, durationMs } of faults) {
    console.log(`  t+${(atMs / 1000).toFixed(1)}s ${kind} ${target} ${(durationMs / 1000).toFixed(1)} s`);
  }
}

/**
 * Injects the planned faults one after the other (a fault that overran its plan pushes the next one
 * back, and one that no longer fits is left out), records each fault's window, and waits for the end.
 */
async function runPlan(plan: FaultPlan, start: number, end: number, targets: FaultTargets): Promise<void> {
  const stamp = (mono: number) => `t+${((mono - start) / 1000).toFixed(1)}s`;
  let previousEnd = start;
  for (const fault of plan.faults) {
    const at = Math.max(start + fault.atMs, previousEnd + MIN_QUIET_MS);
    const what = `${fault.kind} ${fault.target}`;
    if (at + fault.durationMs + RESTART_ALLOWANCE_MS[fault.kind] > end - TAIL_MS) {
      console.log(`chaos: ${stamp(at)} ${what} no longer fits (earlier faults overran); not injected`);
      continue;
    }
    await sleep(Math.max(0, at - monoNow()));
    const window = await injectFault(fault, targets);
    targets.record({ type: 'fault', kind: fault.kind, ...window });
    const hit = window.target === fault.target ? what : `${what} (${window.target})`;
    console.log(
      `chaos: ${stamp(window.start)} ${hit}: whole again after ${((window.end - window.start) / 1000).toFixed(1)} s`,
    );
    previousEnd = window.end;
  }
  await sleep(Math.max(0, end - monoNow()));
}

/** Stops everything the soak started, last started first; each step runs even if an earlier one failed. */
async function runCleanups(): Promise<void> {
  while (cleanups.length) {
    const cleanup = cleanups.pop()!;
    await cleanup().catch((error: unknown) => console.error(`chaos: cleanup failed: ${String(error)}`));
  }
}

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    console.error(`chaos: ${signal}: stopping every process the soak started`);
    void runCleanups().finally(() => process.exit(130));
  });
}

main().then(
  (code) => process.exit(code),
  async (error: unknown) => {
    const why = error instanceof ChaosUsageError ? error.message : error instanceof Error ? error.stack : String(error);
    console.error(`chaos: the soak could not run: ${why}`);
    await runCleanups();
    process.exit(2);
  },
);
