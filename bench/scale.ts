/**
 * Scale: P node processes (Nest apps from the built package) each running the same J cron jobs, every
 * second each (an app with many tenants), on a private redis-server (or, with `-- --store postgres`, a
 * private PostgreSQL cluster and PostgresLockProvider; scale-store.ts), locked and — in the same run —
 * unlocked as the baseline. Each handler records its occurrence and its delay from the nominal fire
 * time; the nodes keep counts and histograms in memory and report at the end of each phase. Prints:
 *
 * - the main table (P × J for T seconds, split over paired rounds, the modes alternating): occurrences
 *   run once / twice or more / never, tick-to-handler delay p50 / p99 / max, store round trips per node
 *   per second, store CPU per second and per job-tick, Redis instructions per job-tick (a smaller locked
 *   phase on a server under callgrind; Redis only), node CPU per node per second, RSS per 1,000 jobs; then the
 *   issue's targets;
 * - the growth table: 100 / 1,000 / 5,000 jobs on one node and on two, and 1 / 5 / 20 nodes × 200 jobs;
 * - the leader table: 1 / 5 / 20 nodes × 100 jobs that fire 10 times in a row once a minute, every node
 *   attempting each tick (`locked`) and each job on the leader of one election (`leader`): the store's
 *   commands, script time and CPU per job-tick, its work over an idle window as long left out
 *   (scale/store-work.ts). The counts do not move with the machine's load; the times do.
 *
 * Run: `npm run bench:scale [-- --store postgres]`. Env: BENCH_NODES=5, BENCH_JOBS=1000, BENCH_SECONDS=60 (measured seconds per
 * mode in the main table), BENCH_ROUNDS=2, BENCH_SCALE_PART=all|main|growth|leader, BENCH_GROWTH_SECONDS=20,
 * BENCH_GROWTH_JOBS=100,1000,5000, BENCH_GROWTH_NODES=1,5,20, BENCH_GROWTH_NODE_JOBS=200,
 * BENCH_INSTRUCTION_NODES=2, BENCH_INSTRUCTION_JOBS=100, BENCH_INSTRUCTION_SECONDS=5, BENCH_LEADER_NODES=1,5,20,
 * BENCH_LEADER_JOBS=100, BENCH_LEADER_TICKS=10; BENCH_SHORT=1 for a
 * smoke run with small defaults. Progress goes to stderr, the report to stdout.
 */
import { cpus } from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { Redis } from 'ioredis';
import { startCallgrindRedis } from './support/callgrind-redis.js';
import { loadAverage, numberFromEnv, numberListFromEnv } from './support/environment.js';
import type { NodeMode } from './scale/node-messages.js';
import { combinePhases, runPhase, type PhaseResult } from './scale/phase.js';
import { phaseMetrics } from './scale/phase-metrics.js';
import { instructionMeter } from './scale/redis-meter.js';
import { startScaleStore } from './scale/scale-store.js';
import { runStoreWork, type StoreWorkOptions, type StoreWorkResult } from './scale/store-work.js';
import { storeWorkTable, type StoreWorkRow } from './scale/store-work-table.js';
import { growthTable, mainTable, targetLines, type GrowthCell, type InstructionCell } from './scale/scale-tables.js';

const SHORT = process.env.BENCH_SHORT === '1';
const PART = process.env.BENCH_SCALE_PART ?? 'all';
if (!['all', 'main', 'growth', 'leader'].includes(PART))
  throw new Error(`BENCH_SCALE_PART must be all, main, growth or leader (got "${PART}")`);

const NODES = numberFromEnv('BENCH_NODES', SHORT ? 2 : 5);
const JOBS = numberFromEnv('BENCH_JOBS', SHORT ? 100 : 1_000);
const SECONDS = numberFromEnv('BENCH_SECONDS', SHORT ? 10 : 60);
const ROUNDS = numberFromEnv('BENCH_ROUNDS', 2);
const GROWTH_SECONDS = numberFromEnv('BENCH_GROWTH_SECONDS', SHORT ? 5 : 20);
const GROWTH_JOBS = numberListFromEnv('BENCH_GROWTH_JOBS', SHORT ? [50, 200] : [100, 1_000, 5_000]);
const GROWTH_NODES = numberListFromEnv('BENCH_GROWTH_NODES', SHORT ? [1, 3] : [1, 5, 20]);
const GROWTH_NODE_JOBS = numberFromEnv('BENCH_GROWTH_NODE_JOBS', SHORT ? 50 : 200);
const INSTRUCTION_NODES = numberFromEnv('BENCH_INSTRUCTION_NODES', SHORT ? 1 : 2);
const INSTRUCTION_JOBS = numberFromEnv('BENCH_INSTRUCTION_JOBS', SHORT ? 20 : 100);
const INSTRUCTION_SECONDS = numberFromEnv('BENCH_INSTRUCTION_SECONDS', SHORT ? 3 : 5);
const LEADER_NODES = numberListFromEnv('BENCH_LEADER_NODES', SHORT ? [1, 3] : [1, 5, 20]);
const LEADER_JOBS = numberFromEnv('BENCH_LEADER_JOBS', SHORT ? 20 : 100);
const LEADER_TICKS = numberFromEnv('BENCH_LEADER_TICKS', SHORT ? 5 : 10);
const CORES = cpus().length;
/** How long the server under callgrind is measured idle, before its phase. */
const IDLE_MS = 3_000;

function progress(text: string): void {
  process.stderr.write(`[scale ${new Date().toISOString().slice(11, 19)}] ${text}\n`);
}

function describePhase(phase: PhaseResult): string {
  const m = phaseMetrics(phase);
  const { twiceOrMore, never } = phase.counts;
  return `twice+ ${twiceOrMore}, never ${never}, delay p99 ${m.delayP99} ms, ${m.roundTripsPerNodeSecond.toFixed(1)} round trips/node/s, node CPU ${m.nodeCpuMsPerNodeSecond.toFixed(0)} ms/node/s, machine ${phase.machineBusyPercent.toFixed(0)} % busy`;
}

const STORE = process.argv[2] === '--store' ? process.argv[3] : (process.argv[2]?.split('=')[1] ?? 'redis');
if (STORE !== 'redis' && STORE !== 'postgres') throw new Error(`--store must be redis or postgres (got "${STORE}")`);
const store = await startScaleStore(STORE);

/** One phase on the private server, with progress lines. */
async function phase(mode: NodeMode, nodes: number, jobs: number, seconds: number): Promise<PhaseResult> {
  progress(`${mode}: ${nodes} node(s) × ${jobs} jobs, ${seconds} s window`);
  const { kind, url, reset, meter } = store;
  const result = await runPhase({ mode, nodes, jobs, seconds, store: kind, storeUrl: url, reset, meter });
  progress(`  ${describePhase(result)}`);
  return result;
}

/** A smaller locked phase on a server under callgrind: Redis instructions per job-tick. */
async function instructionCell(): Promise<InstructionCell> {
  let callgrind;
  try {
    callgrind = await startCallgrindRedis();
  } catch (error) {
    return {
      unavailable: `redis-server under valgrind did not start (${error instanceof Error ? error.message : String(error)})`,
    };
  }
  const callgrindAdmin = new Redis(callgrind.port, '127.0.0.1');
  try {
    await callgrind.zero();
    const idleFrom = performance.now();
    await sleep(IDLE_MS);
    const idleInstructionsPerSecond = (await callgrind.read()) / ((performance.now() - idleFrom) / 1_000);
    const [nodes, jobs, seconds] = [INSTRUCTION_NODES, INSTRUCTION_JOBS, INSTRUCTION_SECONDS];
    progress(`locked under callgrind: ${nodes} node(s) × ${jobs} jobs, ${seconds} s window`);
    const url = `redis://127.0.0.1:${callgrind.port}`;
    const result = await runPhase({
      mode: 'locked',
      nodes,
      jobs,
      seconds,
      store: 'redis',
      storeUrl: url,
      reset: () => callgrindAdmin.flushall(),
      meter: instructionMeter(callgrind),
    });
    progress(`  ${describePhase(result)}`);
    return { phase: result, idleInstructionsPerSecond };
  } catch (error) {
    return {
      unavailable: `the phase under callgrind could not run (${error instanceof Error ? error.message.split('\n')[0] : String(error)})`,
    };
  } finally {
    callgrindAdmin.disconnect();
    await callgrind.kill();
  }
}

async function runMainTable(): Promise<void> {
  const windowSeconds = Math.max(1, Math.round(SECONDS / ROUNDS));
  const phases: Record<'locked' | 'unlocked', PhaseResult[]> = { locked: [], unlocked: [] };
  for (let round = 0; round < ROUNDS; round++) {
    // Alternating which mode goes first: a drift of the machine's load over the run favours neither.
    const order = round % 2 === 0 ? (['unlocked', 'locked'] as const) : (['locked', 'unlocked'] as const);
    for (const mode of order) phases[mode].push(await phase(mode, NODES, JOBS, windowSeconds));
  }
  const instructions: InstructionCell =
    store.kind === 'redis' ? await instructionCell() : { unavailable: 'callgrind measures redis-server only' };
  const unlocked = combinePhases(phases.unlocked);
  const locked = combinePhases(phases.locked);
  console.log(
    `\n## Main: ${NODES} nodes × ${JOBS.toLocaleString('en-US')} jobs every second, ${ROUNDS} round(s) of ${windowSeconds} s per mode\n`,
  );
  console.log(mainTable(unlocked, locked, instructions, store.name));
  console.log('\nPaired rounds, delay p99 (ms) unlocked → locked:');
  phases.locked.forEach((lockedRound, round) => {
    const u = phaseMetrics(phases.unlocked[round]).delayP99;
    const l = phaseMetrics(lockedRound).delayP99;
    console.log(`- round ${round + 1}: ${u} → ${l} (${l - u >= 0 ? '+' : ''}${l - u})`);
  });
  if ('phase' in instructions) {
    const { counts } = instructions.phase;
    console.log(
      `\nUnder callgrind: twice or more ${counts.twiceOrMore}, never ${counts.never}, ${instructions.phase.warnings} warnings.`,
    );
  }
  console.log('\nTargets:');
  for (const line of targetLines(unlocked, locked, instructions, CORES, store.name)) console.log(line);
}

async function runGrowthTable(): Promise<void> {
  const setups = [
    ...[1, 2].flatMap((nodes) => GROWTH_JOBS.map((jobs) => ({ label: 'jobs', nodes, jobs }))),
    ...GROWTH_NODES.map((nodes) => ({ label: 'nodes', nodes, jobs: GROWTH_NODE_JOBS })),
  ];
  const cells: GrowthCell[] = [];
  for (const [index, setup] of setups.entries()) {
    try {
      const order: NodeMode[] = index % 2 === 0 ? ['unlocked', 'locked'] : ['locked', 'unlocked'];
      const results: Partial<Record<NodeMode, PhaseResult>> = {};
      for (const mode of order) results[mode] = await phase(mode, setup.nodes, setup.jobs, GROWTH_SECONDS);
      cells.push({ ...setup, unlocked: results.unlocked!, locked: results.locked! });
    } catch (error) {
      const failure = (error instanceof Error ? error.message : String(error)).split('\n')[0];
      progress(`  could not run: ${failure}`);
      cells.push({ ...setup, failure });
    }
  }
  console.log(`\n## Growth: one round per mode, ${GROWTH_SECONDS} s window each\n`);
  console.log(growthTable(cells, CORES, store.name));
}

/** One leader-table phase, or why it could not run. */
async function storeWork(
  mode: StoreWorkOptions['mode'],
  nodes: number,
): Promise<StoreWorkResult | { failure: string }> {
  progress(`${mode}: ${nodes} node(s) × ${LEADER_JOBS} jobs, a burst of ${LEADER_TICKS} ticks`);
  try {
    const result = await runStoreWork({
      mode,
      nodes,
      jobs: LEADER_JOBS,
      ticks: LEADER_TICKS,
      store: store.kind,
      storeUrl: store.url,
      reset: store.reset,
      meter: store.meter,
    });
    progress(`  once ${result.once}, twice+ ${result.twiceOrMore}, never ${result.never}, ${loadAverage()}`);
    return result;
  } catch (error) {
    const failure = (error instanceof Error ? error.message : String(error)).split('\n')[0];
    progress(`  could not run: ${failure}`);
    return { failure };
  }
}

async function runLeaderTable(): Promise<void> {
  const rows: StoreWorkRow[] = [];
  for (const [index, nodes] of LEADER_NODES.entries()) {
    // Alternating which mode goes first, as the other tables do.
    const locked = index % 2 === 0 ? await storeWork('locked', nodes) : undefined;
    const leader = await storeWork('leader', nodes);
    rows.push({ nodes, locked: locked ?? (await storeWork('locked', nodes)), leader });
  }
  console.log(
    `\n## Jobs on the leader: ${store.name} work per job-tick, ${LEADER_JOBS} jobs × a burst of ${LEADER_TICKS} ticks\n`,
  );
  console.log(storeWorkTable(rows, store.name));
}

try {
  console.log(`# Scale bench\n\n${await store.describe()} · ${loadAverage()} at the start`);
  if (PART === 'all' || PART === 'main') await runMainTable();
  if (PART === 'all' || PART === 'growth') await runGrowthTable();
  if (PART === 'all' || PART === 'leader') await runLeaderTable();
  console.log(`\n${loadAverage()} at the end`);
} finally {
  await store.stop();
}
