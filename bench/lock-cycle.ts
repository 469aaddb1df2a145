/**
 * Lock-cycle benchmark: what one take-and-release of a free lock, and one failed attempt at a held
 * lock, cost with this package, against the two-round-trip floor (raw ioredis), the floor of a fenced
 * lock and redis-semaphore. Run with `npm run bench`; see bench/README.md. Uses the shared Redis
 * (REDIS_URL) under a unique key prefix and deletes its keys at the end.
 *
 * Three runs, each in a process of its own, because of one process-wide switch: the first
 * `AsyncLocalStorage.run()` turns on promise hooks for the whole process on Node 20, which makes every
 * promise of every contender dearer. The `provider` run never turns them on, as an app that uses the
 * provider alone; the `module` run turns them on before measuring, as an app that runs its jobs
 * through the module does. The `replica` run measures `minReplicasToAck` against the plain provider on a
 * private primary with one replica.
 *
 * `npm run bench -- --store postgres` measures PostgresLockProvider instead (bench/postgres/lock-cycle-postgres.ts).
 */
import { fork } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { Logger } from '@nestjs/common';
import { Redis } from 'ioredis';
import { startPrivateRedisServer, type PrivateRedisServer } from '../test/support/redis-server.js';
import { deleteKeys, SHARED_REDIS_URL, uniquePrefix } from '../test/support/shared-redis.js';
import { waitUntil } from '../test/support/wait-until.js';
import type { Contender, ContenderSettings } from './contenders/contender.js';
import { executorContender } from './contenders/executor.js';
import { fencedFloorContender } from './contenders/fenced-floor.js';
import { oursContender, replicaAckedContender } from './contenders/ours.js';
import { peerContender, peerKeyPrefix } from './contenders/peer.js';
import { rawContender } from './contenders/raw.js';
import { measureCommandUsage, type CommandUsage } from './support/command-usage.js';
import { describeEnvironment, loadAverage, numberFromEnv } from './support/environment.js';
import {
  pairedRatios,
  runPairedRounds,
  williamsBlockLength,
  type PairedCase,
  type PairedResult,
} from './support/paired-rounds.js';
import { median, medianUncertainty, quantile } from './support/stats.js';
import { markdownTable } from './support/table.js';
import { measureThroughput } from './support/throughput.js';

const BENCH_SECONDS = numberFromEnv('BENCH_SECONDS', 45);
/** How many times each run is repeated, each in a fresh process; the target cells' spread is printed at the end. */
const BENCH_REPEAT = numberFromEnv('BENCH_REPEAT', 1);
/**
 * Short slices, many rounds: a neighbour's CPU burst then spoils a few pairs, which the median of
 * paired ratios ignores, rather than a whole contender's long slice.
 */
const SLICE_MS = numberFromEnv('BENCH_SLICE_MS', 100);
/**
 * In the target run, after {@link BENCH_SECONDS}, more rounds until every target cell's median is known to ± this
 * (95 %), for at most BENCH_MAX_SECONDS in all: the printed figure is then what another run on the machine measures.
 */
const PRECISION = numberFromEnv('BENCH_PRECISION', 0.02);
const MAX_SECONDS = numberFromEnv('BENCH_MAX_SECONDS', 3 * BENCH_SECONDS);
/** How often, in blocks of the balanced order, the precision is checked. */
const CHECK_EVERY_BLOCKS = 3;
const WARMUP_ROUNDS = 2;
const CONCURRENCIES = [1, 64] as const;
const TTL_MS = 30_000;
const COUNT_SAMPLES = 20;
/**
 * The claim under test (the owner's decision on issue #2): the provider reaches at least 0.95× the fenced
 * floor's throughput, the floor of any lock that draws a fencing token in its acquire round trip, in every
 * target case: the uncontended cycle and the contended skip (every replica but one skips every tick), each at
 * c=1 and c=64.
 */
const TARGET = 0.95;
const TARGET_CONTENDER = 'ours RedisLockProvider';
/** Ours needs one round trip per acquire, per release and per failed attempt; minReplicasToAck one more per acquire. */
const EXPECTED_OURS_USAGE = { acquire: 1, release: 1, failedAttempt: 1 };
const EXPECTED_REPLICA_ACKED_USAGE = { ...EXPECTED_OURS_USAGE, acquire: 2 };
const UNCONTENDED = 'uncontended cycle';
const SKIP = 'contended skip';
/** The cases whose ours ÷ fenced floor ratio is checked against {@link TARGET}. */
const TARGET_CASES = [UNCONTENDED, SKIP].flatMap((label) => CONCURRENCIES.map((c) => caseLabel(label, c)));

type Make = (client: Redis, settings: ContenderSettings, maxWorkers: number) => Contender | Promise<Contender>;

interface Run {
  readonly title: string;
  /** Short names (key prefixes) and makers; the first contender is every ratio's baseline. */
  readonly contenders: readonly (readonly [string, Make])[];
  /** Whether this run checks the throughput target (the provider against the fenced floor, no promise hooks). */
  readonly target: boolean;
  /** The first contender's short name, for the ratio columns. Default `raw`. */
  readonly baseline?: string;
  /** A private primary with one replica instead of the shared Redis (REDIS_URL). */
  readonly withReplica?: boolean;
}

const RUNS = {
  provider: {
    title: 'RedisLockProvider on its own (no AsyncLocalStorage in the process)',
    contenders: [
      ['raw', rawContender],
      ['fenced', fencedFloorContender],
      ['ours', oursContender],
      ['peer', peerContender],
    ],
    target: true,
  },
  module: {
    title: 'Inside the module (AsyncLocalStorage on, promise hooks for the whole process)',
    contenders: [
      ['raw', rawContender],
      ['ours', oursContender],
      ['exec', executorContender],
    ],
    target: false,
  },
  replica: {
    title: 'minReplicasToAck: a private primary with one replica (WAIT after each lock taken)',
    contenders: [
      ['ours', oursContender],
      ['acked', replicaAckedContender],
    ],
    target: false,
    baseline: 'ours',
    withReplica: true,
  },
} satisfies Record<string, Run>;
type RunName = keyof typeof RUNS;

// Production apps log without debug; the executor's per-skip debug line must not flood the bench.
Logger.overrideLogger(['log', 'warn', 'error', 'fatal']);

async function connect(url: string): Promise<Redis> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  await client.ping();
  return client;
}

/**
 * A private primary and its replica, linked, on this machine's loopback (a replica elsewhere would add its
 * network's round trip to every WAIT).
 */
async function startPrimaryWithReplica(): Promise<PrivateRedisServer[]> {
  const primary = await startPrivateRedisServer();
  const replica = await startPrivateRedisServer({ replicaOf: primary.port });
  const replicaAdmin = await connect(replica.url);
  await waitUntil(
    async () => /^master_link_status:up/m.test(await replicaAdmin.info('replication')),
    'the replica is linked to the primary',
  );
  await replicaAdmin.quit();
  return [primary, replica];
}

/** The contenders, each on its own client as an app has one, with their contended locks held by `holder`. */
async function contendersOf(run: Run, url: string, prefix: string, holder: Redis): Promise<Contender[]> {
  const maxWorkers = Math.max(...CONCURRENCIES);
  const contenders: Contender[] = [];
  for (const [name, make] of run.contenders) {
    contenders.push(await make(await connect(url), { keyPrefix: `${prefix}:${name}`, ttlMs: TTL_MS }, maxWorkers));
  }
  for (const contender of contenders) {
    await Promise.all(Array.from({ length: maxWorkers }, (_, worker) => contender.holdElsewhere(worker, holder)));
  }
  return contenders;
}

function pairedCase(
  label: string,
  contenders: readonly Contender[],
  concurrency: number,
  op: (c: Contender, worker: number) => Promise<void>,
): PairedCase {
  return {
    label: caseLabel(label, concurrency),
    entrants: contenders.map((c) => ({
      label: c.label,
      measure: () => measureThroughput((worker) => op(c, worker), concurrency, SLICE_MS),
    })),
  };
}

function cases(contenders: readonly Contender[]): PairedCase[] {
  return [
    ...CONCURRENCIES.map((concurrency) =>
      pairedCase(UNCONTENDED, contenders, concurrency, (c, worker) => c.cycle(worker)),
    ),
    ...CONCURRENCIES.map((concurrency) =>
      pairedCase(SKIP, contenders, concurrency, (c, worker) => c.attemptHeld(worker)),
    ),
  ];
}

function caseLabel(label: string, concurrency: number): string {
  return `${label}, c=${concurrency}`;
}

/** Per round, `r`'s ops/s over the fenced floor's in the same case and round; undefined without a fenced floor. */
function ratiosToFencedFloor(r: PairedResult, results: readonly PairedResult[]): number[] | undefined {
  const floor = results.find((other) => other.caseLabel === r.caseLabel && isFencedFloor(other.label));
  return floor && pairedRatios(r.samples, floor.samples);
}

function range(values: readonly number[], digits: number): string {
  return `${quantile(values, 0.25).toFixed(digits)}–${quantile(values, 0.75).toFixed(digits)}`;
}

function throughputTable(run: Run, results: readonly PairedResult[]): string {
  const hasFencedFloor = results.some((r) => isFencedFloor(r.label));
  const rows = results.map((r) => {
    const toFloor = isOurs(r.label) ? ratiosToFencedFloor(r, results) : undefined;
    return [
      r.caseLabel,
      r.label,
      Math.round(r.medianOpsPerSecond).toLocaleString('en-US'),
      r.medianRatio.toFixed(2),
      range(r.ratios, 2),
      ...(hasFencedFloor ? [toFloor ? median(toFloor).toFixed(3) : ''] : []),
      ...(run.target ? [isTargetCell(r) && toFloor ? targetVerdict(median(toFloor)) : ''] : []),
    ];
  });
  const baseline = run.baseline ?? 'raw';
  const headers = ['case', 'contender', 'ops/s (median)', `× ${baseline} (median of paired)`, `× ${baseline} IQR`];
  const floorHeaders = hasFencedFloor ? ['× fenced floor (median of paired)'] : [];
  return markdownTable([...headers, ...floorHeaders, ...(run.target ? ['target'] : [])], rows);
}

function isTargetCell(r: PairedResult): boolean {
  return r.label === TARGET_CONTENDER && TARGET_CASES.includes(r.caseLabel);
}

function verdict(ratio: number): 'MET' | 'MISSED' {
  return ratio >= TARGET ? 'MET' : 'MISSED';
}

function targetVerdict(ratio: number): string {
  return `≥ ${TARGET.toFixed(2)}: ${ratio.toFixed(3)} ${verdict(ratio)}`;
}

/**
 * One target cell of one run: the median of ours ÷ fenced floor over the paired rounds, their IQR, and how far the
 * median may be off (half its 95 % interval).
 */
interface TargetCell {
  readonly caseLabel: string;
  readonly ratio: number;
  readonly iqr: string;
  readonly uncertainty: number;
}

function targetCells(results: readonly PairedResult[]): TargetCell[] {
  return results.filter(isTargetCell).map((r) => {
    const toFloor = ratiosToFencedFloor(r, results);
    if (!toFloor) throw new Error(`no fenced floor in case "${r.caseLabel}"`);
    const uncertainty = medianUncertainty(toFloor);
    return { caseLabel: r.caseLabel, ratio: median(toFloor), iqr: range(toFloor, 3), uncertainty };
  });
}

/** Whether the run has every target cell's median to {@link PRECISION}; true for a run without targets. */
function precise(results: readonly PairedResult[]): boolean {
  return targetCells(results).every((cell) => cell.uncertainty <= PRECISION);
}

/** The target cells on their own, so the verdict needs no reading of the big table. */
function targetSummary(cells: readonly TargetCell[]): string {
  const rows = cells.map(({ caseLabel, ratio, iqr, uncertainty }) => {
    return [caseLabel, ratio.toFixed(3), iqr, `± ${uncertainty.toFixed(3)}`, verdict(ratio)];
  });
  const headers = [
    'target cell',
    `${TARGET_CONTENDER} ÷ fenced floor (median of paired)`,
    'IQR',
    'median ± (95 %)',
    `≥ ${TARGET}`,
  ];
  return markdownTable(headers, rows);
}

/** Over repeated runs: each target cell's lowest and highest median, and in how many runs it was met. */
function targetSpread(runs: readonly (readonly TargetCell[])[]): string {
  const rows = runs[0].map(({ caseLabel }) => {
    const ratios = runs.map((cells) => cells.find((cell) => cell.caseLabel === caseLabel)!.ratio);
    const met = ratios.filter((ratio) => ratio >= TARGET).length;
    const spread = `${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)}`;
    return [caseLabel, spread, ratios.map((ratio) => ratio.toFixed(3)).join(' '), `${met} of ${runs.length}`];
  });
  const headers = ['target cell', `${TARGET_CONTENDER} ÷ fenced floor, lowest–highest`, 'each run', `runs ≥ ${TARGET}`];
  return markdownTable(headers, rows);
}

function usageTable(usage: ReadonlyMap<Contender, CommandUsage>): string {
  const rows = [...usage].map(([contender, u]) => {
    const expected = expectedUsage(contender.label);
    const counts = expected && `${expected.acquire} / ${expected.release} / ${expected.failedAttempt}`;
    return [
      contender.label,
      String(u.acquire),
      String(u.release),
      String(u.failedAttempt),
      u.names.join(', '),
      counts ? (meetsExpectedUsage(contender.label, u) ? `${counts} met` : `expected ${counts}: MISSED`) : '',
    ];
  });
  return markdownTable(
    ['contender', 'cmds/acquire', 'cmds/release', 'cmds/failed attempt', 'commands', 'target'],
    rows,
  );
}

/** What our contender `label` must send per operation; `undefined` for the others. */
function expectedUsage(label: string): typeof EXPECTED_OURS_USAGE | undefined {
  if (!isOurs(label)) return undefined;
  return label.includes('minReplicasToAck') ? EXPECTED_REPLICA_ACKED_USAGE : EXPECTED_OURS_USAGE;
}

function meetsExpectedUsage(label: string, usage: CommandUsage): boolean {
  const expected = expectedUsage(label);
  return (
    !expected ||
    (Object.keys(expected) as (keyof typeof EXPECTED_OURS_USAGE)[]).every((op) => usage[op] === expected[op])
  );
}

function isOurs(label: string): boolean {
  return label.startsWith('ours');
}

function isFencedFloor(label: string): boolean {
  return label.startsWith('fenced floor');
}

/** One run, in this process; exits non-zero if our command counts are not 1 / 1 / 1. */
async function measure(runName: RunName): Promise<void> {
  const run: Run = RUNS[runName];
  const prefix = uniquePrefix(`bench-${runName}`);
  const servers = run.withReplica ? await startPrimaryWithReplica() : [];
  const url = servers[0]?.url ?? SHARED_REDIS_URL;
  const admin = await connect(url);
  const holder = await connect(url);
  let contenders: Contender[] = [];
  try {
    const topology = run.withReplica ? ' · a private primary and 1 replica on loopback' : '';
    const environment = `${await describeEnvironment(admin)}${topology} · ${loadAverage()} at the start`;
    contenders = await contendersOf(run, url, prefix, holder);
    // Outside the timed part; in the module run, the executor's first run turns the promise hooks on here.
    const usage = new Map<Contender, CommandUsage>();
    for (const contender of contenders) usage.set(contender, await measureCommandUsage(contender, COUNT_SAMPLES));

    const benchCases = cases(contenders);
    const slicesPerRound = benchCases.reduce((sum, c) => sum + c.entrants.length, 0);
    // Whole blocks of the balanced order only, so that no entrant gets the favourable slot more often.
    const block = williamsBlockLength(contenders.length);
    const affordable = Math.floor((BENCH_SECONDS * 1000) / (slicesPerRound * SLICE_MS)) - WARMUP_ROUNDS;
    const rounds = Math.max(block, affordable - (affordable % block));
    const maxRounds = run.target
      ? Math.max(rounds, Math.floor((MAX_SECONDS * 1000) / (slicesPerRound * SLICE_MS)))
      : rounds;
    console.error(
      `${runName}: ${rounds}–${maxRounds} rounds (+${WARMUP_ROUNDS} warm-up) of ${slicesPerRound} slices of ${SLICE_MS} ms`,
    );
    const more = { block: CHECK_EVERY_BLOCKS * block, maxRounds, until: precise };
    const results = await runPairedRounds(
      benchCases,
      rounds,
      WARMUP_ROUNDS,
      (round) => {
        if (round >= 0 && (round + 1) % 5 === 0) console.error(`${runName}: round ${round + 1} done`);
      },
      more,
    );
    const measured = results[0].samples.length;

    console.log(
      `\n## ${run.title}\n\n${environment}; ${measured} paired rounds of ${SLICE_MS} ms slices, TTL ${TTL_MS} ms\n`,
    );
    console.log(throughputTable(run, results));
    if (run.target) {
      const cells = targetCells(results);
      const settled = precise(results) ? 'reached' : `not reached in ${maxRounds} rounds`;
      console.log(`\nTarget: ${TARGET_CONTENDER} ≥ ${TARGET}× the fenced floor, ratios of slices of the same round`);
      console.log(`Precision: every target median to ± ${PRECISION} (95 % interval), ${settled}\n`);
      console.log(targetSummary(cells));
      process.send?.(cells);
    }
    console.log(`\n${loadAverage()} at the end of the run`);
    console.log("\nRedis commands per operation (counted on each contender's client, sequential)\n");
    console.log(usageTable(usage));
    if (![...usage].every(([c, u]) => meetsExpectedUsage(c.label, u))) process.exitCode = 1;
  } finally {
    await deleteKeys(admin, prefix);
    await deleteKeys(admin, peerKeyPrefix(prefix));
    await Promise.all([admin, holder, ...contenders.map((c) => c.client)].map((client) => client.quit()));
    await Promise.all(servers.map((server) => server.stop()));
  }
}

const CHILD = '--child';

/**
 * Each run in a child process of its own, one after the other, {@link BENCH_REPEAT} times; fails if any run
 * failed. With repeats, ends with the spread of the target cells over the runs.
 */
async function measureAll(runNames: readonly RunName[]): Promise<void> {
  const targetRuns: TargetCell[][] = [];
  for (let repeat = 1; repeat <= BENCH_REPEAT; repeat++) {
    for (const runName of runNames) {
      if (BENCH_REPEAT > 1) console.log(`\n# Repeat ${repeat} of ${BENCH_REPEAT}: ${runName}`);
      const child = fork(fileURLToPath(import.meta.url), [runName, CHILD], { stdio: 'inherit' });
      child.on('message', (cells: TargetCell[]) => targetRuns.push(cells));
      const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
      if (code !== 0) process.exitCode = 1;
    }
  }
  if (targetRuns.length > 1) {
    console.log(`\n## Target cells over ${targetRuns.length} provider runs\n\n${loadAverage()} now\n`);
    console.log(targetSpread(targetRuns));
  }
}

/** `--store postgres` (or `--store=postgres`): the PostgreSQL bench instead (bench/postgres/); `redis` is the default. */
function requestedStore(args: readonly string[]): string {
  if (args[0] === '--store') return args[1] ?? '';
  return args[0]?.startsWith('--store=') ? args[0].slice('--store='.length) : 'redis';
}

const store = requestedStore(process.argv.slice(2));
const [requested, child] = store === 'redis' ? process.argv.slice(2) : [];
if (store === 'postgres') {
  const { benchPostgresLockCycle } = await import('./postgres/lock-cycle-postgres.js');
  if (!(await benchPostgresLockCycle())) process.exitCode = 1;
} else if (store !== 'redis') {
  throw new Error(`--store must be redis or postgres (got "${store}")`);
} else if (requested !== undefined && !(requested in RUNS)) {
  throw new Error(`Unknown run "${requested}"; expected one of: ${Object.keys(RUNS).join(', ')}`);
} else if (child === CHILD) await measure(requested as RunName);
else await measureAll(requested === undefined ? (Object.keys(RUNS) as RunName[]) : [requested as RunName]);
