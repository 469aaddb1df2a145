import { median } from '../support/stats.js';
import type { PhaseResult } from './phase.js';

/** The figures of one phase (or of the rounds of one setup) that the scale tables print. */
export interface PhaseMetrics {
  /** Tick-to-handler delay, ms (whole milliseconds: `Date.now()`). */
  readonly delayP50: number;
  readonly delayP99: number;
  readonly delayMax: number;
  readonly roundTripsPerNodeSecond: number;
  readonly commandsSentPerNodeSecond: number;
  /** Lock calls (claims, releases, renewals) per node per second; each is a round trip of its own. */
  readonly scriptCallsPerNodeSecond: number;
  readonly storeCpuMsPerSecond?: number;
  readonly storeCpuMicrosPerJobTick?: number;
  /** Commands Redis executed per job-tick, those inside scripts included (not measured on PostgreSQL). */
  readonly storeCommandsPerJobTick?: number;
  readonly nodeCpuMsPerNodeSecond: number;
  /** Median over the nodes, after the phase, MB. */
  readonly rssMb: number;
  readonly heapUsedMb: number;
  /** Median over the nodes of (memory after the phase − memory before adding the jobs) per 1,000 jobs, MB. */
  readonly rssPer1000JobsMb: number;
  readonly heapPer1000JobsMb: number;
}

const MB = 1024 * 1024;

export function phaseMetrics(phase: PhaseResult): PhaseMetrics {
  // A job-tick: one occurrence of one job, across the cluster.
  const jobTicks = phase.jobs * phase.seconds;
  const nodeSeconds = phase.nodes * phase.seconds;
  const perJobTick = (value: number | undefined, scale = 1) =>
    value === undefined ? undefined : (value * scale) / jobTicks;
  const growthPer1000 = (read: (sample: { rss: number; heapUsed: number }) => number) =>
    median(phase.memory.map((after, node) => (read(after) - read(phase.emptyMemory[node])) / MB)) *
    (1_000 / phase.jobs);
  return {
    delayP50: delayQuantile(phase.delays, 0.5),
    delayP99: delayQuantile(phase.delays, 0.99),
    delayMax: Math.max(...phase.delays.keys()),
    roundTripsPerNodeSecond: phase.roundTrips / nodeSeconds,
    commandsSentPerNodeSecond: phase.commandsSent / nodeSeconds,
    scriptCallsPerNodeSecond: phase.scriptCalls / nodeSeconds,
    storeCpuMsPerSecond:
      phase.store.cpuMicros === undefined ? undefined : phase.store.cpuMicros / 1_000 / phase.seconds,
    storeCpuMicrosPerJobTick: perJobTick(phase.store.cpuMicros),
    storeCommandsPerJobTick: perJobTick(phase.store.commandsExecuted),
    nodeCpuMsPerNodeSecond: phase.nodeCpuMicros / 1_000 / nodeSeconds,
    rssMb: median(phase.memory.map((sample) => sample.rss / MB)),
    heapUsedMb: median(phase.memory.map((sample) => sample.heapUsed / MB)),
    rssPer1000JobsMb: growthPer1000((sample) => sample.rss),
    heapPer1000JobsMb: growthPer1000((sample) => sample.heapUsed),
  };
}

/** The `q` quantile of a histogram of whole milliseconds, by nearest rank: a delay some run really had. */
export function delayQuantile(histogram: ReadonlyMap<number, number>, q: number): number {
  const delays = [...histogram.keys()].sort((a, b) => a - b);
  const total = [...histogram.values()].reduce((sum, n) => sum + n, 0);
  if (total === 0) return Number.NaN;
  const rank = Math.max(1, Math.ceil(q * total));
  let seen = 0;
  for (const delay of delays) {
    seen += histogram.get(delay)!;
    if (seen >= rank) return delay;
  }
  return delays[delays.length - 1];
}

/**
 * Why a setup's figures do not describe a clean run, if they do not: duplicates or missed occurrences,
 * early claims, a baseline that itself fell behind, warnings. Empty when clean.
 */
export function uncleanReasons(locked: PhaseResult, unlocked: PhaseResult | undefined): string[] {
  const reasons: string[] = [];
  const n = (value: number) => value.toLocaleString('en-US');
  if (locked.counts.twiceOrMore) reasons.push(`${n(locked.counts.twiceOrMore)} occurrences ran twice or more`);
  if (locked.counts.never) reasons.push(`${n(locked.counts.never)} occurrences never ran`);
  if (locked.runsWithoutLock) reasons.push(`${n(locked.runsWithoutLock)} locked runs saw no lock`);
  if (locked.earlyClaims)
    reasons.push(
      `${n(locked.earlyClaims)} locked runs claimed the next occurrence, early (tick over half a second late)`,
    );
  if (locked.warnings)
    reasons.push(`locked nodes logged ${n(locked.warnings)} warnings (first: ${locked.firstWarnings[0]})`);
  if (unlocked && (unlocked.counts.never || unlocked.counts.twiceOrMore)) {
    reasons.push(
      `the unlocked baseline itself missed ${n(unlocked.counts.never)} and repeated ${n(unlocked.counts.twiceOrMore)} node-occurrences (cron fell behind)`,
    );
  }
  if (unlocked?.warnings)
    reasons.push(`unlocked nodes logged ${n(unlocked.warnings)} warnings (first: ${unlocked.firstWarnings[0]})`);
  return reasons;
}

/**
 * Windows in which the machine was saturated (other processes share the cores): the delays then say
 * more about the machine than about the setup, even when every occurrence ran once.
 */
export function saturationCaveats(phases: readonly PhaseResult[], cores: number): string[] {
  return phases
    .filter((phase) => phase.machineBusyPercent >= 95)
    .map((phase) => {
      const nodesCpu = phase.nodeCpuMicros / 1_000 / phase.seconds;
      return `machine ${phase.machineBusyPercent.toFixed(0)} % busy in the ${phase.mode} window (its nodes: ${nodesCpu.toFixed(0)} ms CPU/s of ${cores * 1_000})`;
    });
}
