import { setTimeout as sleep } from 'node:timers/promises';
import { sampleCpu } from '../../test/chaos/cpu-sampler.js';
import type { MemorySample, NodeMode, ReportMessage, SecondSample } from './node-messages.js';
import type { StoreMeter, StoreUsage } from './store-meter.js';
import { ScaleFleet, type FleetOptions } from './scale-fleet.js';

/** After the last node started its jobs: JIT, script caches and the first claims settle. */
const WARMUP_MS = 5_000;
/**
 * After the window, before the reports: runs of the window's last occurrences that start late are still
 * counted. Longer than the lock module's default attempt timeout (2 s), after which a tick is skipped. Not
 * a whole number of seconds: the nodes measure their memory when asked, and at a whole second a locked
 * node is in the middle of its burst of claims (a thousand runs in flight), an unlocked one is not.
 */
const DRAIN_MS = 4_750;

/** One phase: P nodes in one mode, each running J jobs every second, measured over a window of whole seconds. */
export interface PhaseOptions extends Omit<FleetOptions, 'keyPrefix'> {
  /** Length of the measured window. */
  readonly seconds: number;
  /** Empties the private server the nodes use (`storeUrl`) before the phase. */
  readonly reset: () => Promise<unknown>;
  readonly meter: StoreMeter;
}

/** How often each occurrence ran: per job and second (locked), or per job, second and node (unlocked). */
export interface RunCounts {
  readonly expected: number;
  readonly once: number;
  readonly twiceOrMore: number;
  readonly never: number;
}

/** What one phase measured over its window; {@link combinePhases} adds phases of the same setup up. */
export interface PhaseResult {
  readonly mode: NodeMode;
  readonly nodes: number;
  readonly jobs: number;
  readonly seconds: number;
  readonly counts: RunCounts;
  /** Tick-to-handler delay (ms) → runs, every node's runs of the window's occurrences. */
  readonly delays: ReadonlyMap<number, number>;
  /** Node CPU over the window, summed over the nodes, µs. */
  readonly nodeCpuMicros: number;
  /** Round trips and commands (statements) the nodes' clients sent over the window, summed over the nodes. */
  readonly roundTrips: number;
  readonly commandsSent: number;
  /** Lock calls among them (Redis scripts, PostgreSQL batch statements): claims, releases and renewals; the rest is the nodes' presence. */
  readonly scriptCalls: number;
  readonly store: StoreUsage;
  /** Per node: memory before adding the jobs, and after the phase. */
  readonly emptyMemory: readonly MemorySample[];
  readonly memory: readonly MemorySample[];
  readonly runsWithoutLock: number;
  /** Ticks cron ran at once, late, because their timer was already due (over the whole phase). */
  readonly lateTicks: number;
  /** Locked runs of the window's occurrences that claimed them from an earlier tick. */
  readonly earlyClaims: number;
  readonly warnings: number;
  readonly firstWarnings: readonly string[];
  /** The lock module's skipped attempts in the window's seconds, by reason, summed over the nodes. */
  readonly skips: Readonly<Record<string, number>>;
  /** Whole machine (every process), mean over the window's one-second samples, %. */
  readonly machineBusyPercent: number;
}

/**
 * Runs one phase on a fresh fleet: starts the nodes, waits for the warm-up, measures a window of whole
 * seconds [first, first + seconds) — the nodes' totals and the store's meter are read at half past the
 * second before each end, between two bursts of ticks — lets late runs finish, then collects and stops.
 */
export async function runPhase(options: PhaseOptions): Promise<PhaseResult> {
  await options.reset(); // the private server: the phase's job records start from nothing
  const { fleet, emptyMemory } = await ScaleFleet.start({
    mode: options.mode,
    nodes: options.nodes,
    jobs: options.jobs,
    store: options.store,
    storeUrl: options.storeUrl,
    keyPrefix: 'scale',
  });
  try {
    const firstSecond = Math.ceil((Date.now() + WARMUP_MS) / 1_000);
    const endSecond = firstSecond + options.seconds;
    await sleepUntil(firstSecond * 1_000 - 500);
    await options.meter.begin();
    const busy: number[] = [];
    const stopSampling = sampleCpu(1_000, (percent) => busy.push(percent));
    await sleepUntil(endSecond * 1_000 - 500);
    stopSampling();
    const store = await options.meter.end();
    await sleepUntil(endSecond * 1_000 + DRAIN_MS);
    const reports = await fleet.reports();
    return summarize(options, firstSecond, endSecond, reports, emptyMemory, store, busy);
  } finally {
    await fleet.stop();
  }
}

function summarize(
  options: PhaseOptions,
  firstSecond: number,
  endSecond: number,
  reports: readonly ReportMessage[],
  emptyMemory: MemorySample[],
  store: StoreUsage,
  busy: readonly number[],
): PhaseResult {
  const seconds = Array.from({ length: endSecond - firstSecond }, (_, i) => firstSecond + i);
  const runs = reports.map((report) => seconds.map((second) => runsOf(report, second, options.jobs)));
  const counts = { expected: 0, once: 0, twiceOrMore: 0, never: 0 };
  const count = (n: number) => {
    counts.expected += 1;
    if (n === 0) counts.never += 1;
    else if (n === 1) counts.once += 1;
    else counts.twiceOrMore += 1;
  };
  for (const [s] of seconds.entries()) {
    for (let job = 0; job < options.jobs; job++) {
      // Locked and leader: once across the cluster. Unlocked: once on every node (cron's own record, the baseline).
      if (options.mode !== 'unlocked') count(runs.reduce((sum, node) => sum + node[s][job], 0));
      else for (const node of runs) count(node[s][job]);
    }
  }
  const delays = new Map<number, number>();
  for (const report of reports) {
    for (const second of seconds) {
      for (const [delay, n] of report.delays[second] ?? []) delays.set(delay, (delays.get(delay) ?? 0) + n);
    }
  }
  // Totals read at half past the second before the window and before its end: the window's ticks exactly.
  // A node whose event loop was busy read them later (or skipped a second): its difference is scaled to
  // the window's length.
  const delta = (field: Exclude<keyof SecondSample, 'at'>) =>
    reports.reduce((sum, report, node) => {
      const start = sampleNear(report, firstSecond - 1, node);
      const end = sampleNear(report, endSecond - 1, node);
      return sum + ((end[field] - start[field]) * options.seconds * 1_000) / (end.at - start.at);
    }, 0);
  return {
    mode: options.mode,
    nodes: options.nodes,
    jobs: options.jobs,
    seconds: options.seconds,
    counts,
    delays,
    nodeCpuMicros: delta('cpuMicros'),
    roundTrips: delta('roundTrips'),
    commandsSent: delta('commands'),
    scriptCalls: delta('scriptCalls'),
    store,
    emptyMemory,
    memory: reports.map((report) => report.memory),
    runsWithoutLock: reports.reduce((sum, report) => sum + report.runsWithoutLock, 0),
    lateTicks: reports.reduce((sum, report) => sum + report.lateTicks, 0),
    earlyClaims: reports.reduce(
      (sum, report) => sum + seconds.reduce((inWindow, second) => inWindow + (report.earlyClaims[second] ?? 0), 0),
      0,
    ),
    warnings: reports.reduce((sum, report) => sum + report.warnings.count, 0),
    firstWarnings: reports.flatMap((report) => report.warnings.first).slice(0, 5),
    skips: addSkips(reports.flatMap((report) => seconds.map((second) => report.skips[second] ?? {}))),
    machineBusyPercent: busy.length ? busy.reduce((a, b) => a + b, 0) / busy.length : Number.NaN,
  };
}

function runsOf(report: ReportMessage, second: number, jobs: number): Uint8Array {
  const encoded = report.runs[second];
  return encoded === undefined ? new Uint8Array(jobs) : new Uint8Array(Buffer.from(encoded, 'base64'));
}

/** How far from a window's end a node's reading may be: a saturated node's loop misses seconds. */
const SAMPLE_REACH_SECONDS = 3;

/** The node's totals read at half past `second`, else the nearest reading within {@link SAMPLE_REACH_SECONDS}. */
function sampleNear(report: ReportMessage, second: number, node: number): SecondSample {
  for (let distance = 0; distance <= SAMPLE_REACH_SECONDS; distance++) {
    const sample = report.samples[second + distance] ?? report.samples[second - distance];
    if (sample) return sample;
  }
  throw new Error(
    `node ${node + 1} read no totals within ${SAMPLE_REACH_SECONDS} s of ${second}.5 (its event loop was blocked that long)`,
  );
}

/** Adds up phases of the same mode, node count and job count (the rounds of one setup). */
export function combinePhases(phases: readonly PhaseResult[]): PhaseResult {
  const [first] = phases;
  if (!first) throw new Error('combinePhases: no phases');
  const sum = (read: (phase: PhaseResult) => number) => phases.reduce((total, phase) => total + read(phase), 0);
  const sumOptional = (read: (usage: StoreUsage) => number | undefined) =>
    phases.every((phase) => read(phase.store) !== undefined) ? sum((phase) => read(phase.store)!) : undefined;
  const delays = new Map<number, number>();
  for (const phase of phases) for (const [delay, n] of phase.delays) delays.set(delay, (delays.get(delay) ?? 0) + n);
  const seconds = sum((phase) => phase.seconds);
  return {
    ...first,
    seconds,
    counts: {
      expected: sum((p) => p.counts.expected),
      once: sum((p) => p.counts.once),
      twiceOrMore: sum((p) => p.counts.twiceOrMore),
      never: sum((p) => p.counts.never),
    },
    delays,
    nodeCpuMicros: sum((p) => p.nodeCpuMicros),
    roundTrips: sum((p) => p.roundTrips),
    commandsSent: sum((p) => p.commandsSent),
    scriptCalls: sum((p) => p.scriptCalls),
    store: {
      cpuMicros: sumOptional((usage) => usage.cpuMicros),
      commandsExecuted: sumOptional((usage) => usage.commandsExecuted),
      instructions: sumOptional((usage) => usage.instructions),
      executionMicros: sumOptional((usage) => usage.executionMicros),
    },
    emptyMemory: phases.flatMap((p) => p.emptyMemory),
    memory: phases.flatMap((p) => p.memory),
    runsWithoutLock: sum((p) => p.runsWithoutLock),
    lateTicks: sum((p) => p.lateTicks),
    earlyClaims: sum((p) => p.earlyClaims),
    warnings: sum((p) => p.warnings),
    firstWarnings: phases.flatMap((p) => p.firstWarnings).slice(0, 5),
    skips: addSkips(phases.map((p) => p.skips)),
    machineBusyPercent: sum((p) => p.machineBusyPercent * p.seconds) / seconds,
  };
}

/** Skip counts by reason, added up. */
function addSkips(tallies: readonly Readonly<Record<string, number>>[]): Record<string, number> {
  const total: Record<string, number> = {};
  for (const tally of tallies)
    for (const [reason, n] of Object.entries(tally)) total[reason] = (total[reason] ?? 0) + n;
  return total;
}

async function sleepUntil(epochMs: number): Promise<void> {
  const wait = epochMs - Date.now();
  if (wait > 0) await sleep(wait);
}
