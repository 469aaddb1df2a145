import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeMode, ReportMessage } from './node-messages.js';
import { ScaleFleet } from './scale-fleet.js';
import type { StoreMeter, StoreUsage } from './store-meter.js';

/** The jobs fire in the first seconds of each minute only: the rest of the minute is the nodes' presence alone. */
const CYCLE_SECONDS = 60;
/** The first burst, a minute before the measured one, loads the scripts and settles the election. */
const WARMUP_CYCLES = 1;
/** A window starts this long after a burst's last tick: releases, and skip counts sent with the next heartbeat (5 s). */
const SETTLE_SECONDS = 10;
/** The busy window starts this long before its burst. */
const LEAD_SECONDS = 5;
/**
 * A tick this late still runs (cron skips one over 250 ms late by default): on starved cores the burst keeps
 * its occurrences. Under a second, so a late tick never runs for the next one.
 */
const LATE_TICK_THRESHOLD_MS = 900;
/** Most ticks per burst: the idle window (as long as the busy one) must fit between two bursts. */
const MAX_TICKS = 15;

/**
 * Both windows are as long, so presence (heartbeats and the health read every 5 s, the trigger poll every
 * second, election attempts) falls alike in each: from 5 s before the burst to 10 s after its last tick.
 */
const windowSeconds = (ticks: number) => LEAD_SECONDS + ticks + SETTLE_SECONDS;

/** One store-work phase: P nodes in one mode, J jobs that fire `ticks` times in a row once a minute. */
export interface StoreWorkOptions {
  readonly mode: Exclude<NodeMode, 'unlocked'>;
  readonly nodes: number;
  readonly jobs: number;
  /** Occurrences per job in the measured burst, 1 s apart (at most {@link MAX_TICKS}). */
  readonly ticks: number;
  readonly store: 'redis' | 'postgres';
  readonly storeUrl: string;
  readonly reset: () => Promise<unknown>;
  readonly meter: StoreMeter;
}

/** What the store did for one burst of J × ticks job-ticks, with the same nodes' idle work beside it. */
export interface StoreWorkResult {
  readonly mode: StoreWorkOptions['mode'];
  readonly nodes: number;
  readonly jobs: number;
  readonly ticks: number;
  /** The window holding the burst, and one as long with no tick: the nodes' presence only. */
  readonly busy: StoreUsage;
  readonly idle: StoreUsage;
  readonly windowSeconds: number;
  /** Occurrences of the measured burst (J × ticks) that ran once, twice or more, never, across the nodes. */
  readonly once: number;
  readonly twiceOrMore: number;
  readonly never: number;
  /** The lock module's skips in the burst's seconds, by reason, summed over the nodes. */
  readonly skips: Readonly<Record<string, number>>;
  readonly warnings: number;
  readonly firstWarnings: readonly string[];
}

/** The cron expression of a burst of `ticks` seconds at the start of each minute. */
function burstCron(ticks: number): string {
  if (!Number.isInteger(ticks) || ticks < 1 || ticks > MAX_TICKS)
    throw new Error(`ticks must be 1 to ${MAX_TICKS} (got ${ticks})`);
  return `0-${ticks - 1} * * * * *`;
}

/**
 * Starts the nodes, waits for the next minute, lets its burst warm up, then reads the store over an idle
 * window and over the next minute's burst. The counts do not depend on the machine's load: a node late by
 * seconds still makes the same calls, and the windows hold a fixed number of occurrences, not a duration.
 */
export async function runStoreWork(options: StoreWorkOptions): Promise<StoreWorkResult> {
  await options.reset();
  const { fleet } = await ScaleFleet.start({
    mode: options.mode,
    nodes: options.nodes,
    jobs: options.jobs,
    store: options.store,
    storeUrl: options.storeUrl,
    keyPrefix: 'work',
    cron: burstCron(options.ticks),
    lateTickThresholdMs: LATE_TICK_THRESHOLD_MS,
  });
  try {
    const warmup = Math.ceil((Date.now() + 1_000) / (CYCLE_SECONDS * 1_000)) * CYCLE_SECONDS;
    const burst = warmup + WARMUP_CYCLES * CYCLE_SECONDS;
    const length = windowSeconds(options.ticks);
    const idle = await measure(options.meter, warmup + options.ticks + SETTLE_SECONDS, length);
    const busy = await measure(options.meter, burst - LEAD_SECONDS, length);
    return summarize(options, burst, await fleet.reports(), busy, idle);
  } finally {
    await fleet.stop();
  }
}

async function measure(meter: StoreMeter, fromSecond: number, seconds: number): Promise<StoreUsage> {
  await sleepUntil(fromSecond * 1_000);
  await meter.begin();
  await sleepUntil((fromSecond + seconds) * 1_000);
  return meter.end();
}

function summarize(
  options: StoreWorkOptions,
  burst: number,
  reports: readonly ReportMessage[],
  busy: StoreUsage,
  idle: StoreUsage,
): StoreWorkResult {
  const seconds = Array.from({ length: options.ticks }, (_, i) => burst + i);
  let [once, twiceOrMore, never] = [0, 0, 0];
  for (const second of seconds) {
    const runs = reports.map((report) => {
      const encoded = report.runs[second];
      return encoded === undefined ? new Uint8Array(options.jobs) : new Uint8Array(Buffer.from(encoded, 'base64'));
    });
    for (let job = 0; job < options.jobs; job++) {
      const n = runs.reduce((sum, node) => sum + node[job], 0);
      if (n === 0) never += 1;
      else if (n === 1) once += 1;
      else twiceOrMore += 1;
    }
  }
  const skips: Record<string, number> = {};
  for (const report of reports)
    for (const second of seconds)
      for (const [reason, n] of Object.entries(report.skips[second] ?? {})) skips[reason] = (skips[reason] ?? 0) + n;
  return {
    mode: options.mode,
    nodes: options.nodes,
    jobs: options.jobs,
    ticks: options.ticks,
    busy,
    idle,
    windowSeconds: windowSeconds(options.ticks),
    once,
    twiceOrMore,
    never,
    skips,
    warnings: reports.reduce((sum, report) => sum + report.warnings.count, 0),
    firstWarnings: reports.flatMap((report) => report.warnings.first).slice(0, 3),
  };
}

async function sleepUntil(epochMs: number): Promise<void> {
  const wait = epochMs - Date.now();
  if (wait > 0) await sleep(wait);
}
