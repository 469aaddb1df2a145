/**
 * Lock-cycle benchmark: what one take-and-release of a free lock, and one failed attempt at a held
 * lock, cost with this package, against the two-round-trip floor (raw ioredis) and redis-semaphore.
 * Run with `npm run bench`; see bench/README.md. Uses the shared Redis (REDIS_URL) under a unique key
 * prefix and deletes its keys at the end.
 */
import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { deleteKeys, sharedRedis, uniquePrefix } from '../test/support/shared-redis.js';
import type { Contender, ContenderSettings } from './contenders/contender.js';
import { executorContender } from './contenders/executor.js';
import { oursContender } from './contenders/ours.js';
import { peerContender, peerKeyPrefix } from './contenders/peer.js';
import { rawContender } from './contenders/raw.js';
import { measureCommandUsage, type CommandUsage } from './support/command-usage.js';
import { describeEnvironment, numberFromEnv } from './support/environment.js';
import { runPairedRounds, williamsBlockLength, type PairedCase, type PairedResult } from './support/paired-rounds.js';
import { quantile } from './support/stats.js';
import { markdownTable } from './support/table.js';
import { measureThroughput } from './support/throughput.js';

const BENCH_SECONDS = numberFromEnv('BENCH_SECONDS', 45);
/**
 * Short slices, many rounds: a neighbour's CPU burst then spoils a few pairs, which the median of
 * paired ratios ignores, rather than a whole contender's long slice.
 */
const SLICE_MS = numberFromEnv('BENCH_SLICE_MS', 100);
const WARMUP_ROUNDS = 2;
const CONCURRENCIES = [1, 64] as const;
const TTL_MS = 30_000;
const COUNT_SAMPLES = 20;
/** The claim under test: our uncontended cycle costs no more than 5 % over the raw floor. */
const UNCONTENDED_TARGET = 0.95;
/** Ours needs one round trip per acquire, per release and per failed attempt. */
const EXPECTED_OURS_USAGE = { acquire: 1, release: 1, failedAttempt: 1 };
const UNCONTENDED = 'uncontended cycle';

// Production apps log without debug; the executor's per-skip debug line must not flood the bench.
Logger.overrideLogger(['log', 'warn', 'error', 'fatal']);

/** One client per contender, as an app has one, plus the other holder's and one for setup and cleanup. */
interface Clients {
  readonly admin: Redis;
  readonly holder: Redis;
  readonly raw: Redis;
  readonly ours: Redis;
  readonly executor: Redis;
  readonly peer: Redis;
}

async function connect(): Promise<Clients> {
  const ready = async (): Promise<Redis> => {
    const client = sharedRedis();
    await client.ping();
    return client;
  };
  const [admin, holder, raw, ours, executor, peer] = await Promise.all(Array.from({ length: 6 }, ready));
  return { admin, holder, raw, ours, executor, peer };
}

/** The contenders, each with its contended locks already held by `clients.holder`. */
async function contendersOn(clients: Clients, prefix: string): Promise<Contender[]> {
  const settings = (name: string): ContenderSettings => ({ keyPrefix: `${prefix}:${name}`, ttlMs: TTL_MS });
  const maxWorkers = Math.max(...CONCURRENCIES);
  const contenders = [
    await rawContender(clients.raw, settings('raw')),
    oursContender(clients.ours, settings('ours'), maxWorkers),
    executorContender(clients.executor, settings('exec')),
    peerContender(clients.peer, settings('peer')),
  ];
  for (const contender of contenders) {
    await Promise.all(Array.from({ length: maxWorkers }, (_, worker) => contender.holdElsewhere(worker, clients.holder)));
  }
  return contenders;
}

function pairedCase(label: string, contenders: readonly Contender[], concurrency: number, op: (c: Contender, worker: number) => Promise<void>): PairedCase {
  return {
    label: `${label}, c=${concurrency}`,
    entrants: contenders.map((c) => ({ label: c.label, measure: () => measureThroughput((worker) => op(c, worker), concurrency, SLICE_MS) })),
  };
}

function cases(contenders: readonly Contender[]): PairedCase[] {
  return [
    ...CONCURRENCIES.map((concurrency) => pairedCase(UNCONTENDED, contenders, concurrency, (c, worker) => c.cycle(worker))),
    ...CONCURRENCIES.map((concurrency) => pairedCase('contended skip', contenders, concurrency, (c, worker) => c.attemptHeld(worker))),
  ];
}

function targetCell(result: PairedResult): string {
  if (!result.caseLabel.startsWith(UNCONTENDED) || !isOurs(result.label)) return '';
  return `≥ ${UNCONTENDED_TARGET.toFixed(2)} ${result.medianRatio >= UNCONTENDED_TARGET ? 'met' : 'MISSED'}`;
}

function throughputTable(results: readonly PairedResult[]): string {
  const rows = results.map((r) => [
    r.caseLabel,
    r.label,
    Math.round(r.medianOpsPerSecond).toLocaleString('en-US'),
    r.medianRatio.toFixed(2),
    `${quantile(r.ratios, 0.25).toFixed(2)}–${quantile(r.ratios, 0.75).toFixed(2)}`,
    targetCell(r),
  ]);
  return markdownTable(['case', 'contender', 'ops/s (median)', '× raw (median of paired)', '× raw IQR', 'target'], rows);
}

function usageTable(usage: ReadonlyMap<Contender, CommandUsage>): string {
  const rows = [...usage].map(([contender, u]) => [
    contender.label,
    String(u.acquire),
    String(u.release),
    String(u.failedAttempt),
    u.names.join(', '),
    isOurs(contender.label) ? (meetsExpectedUsage(u) ? '1 / 1 / 1 met' : 'expected 1 / 1 / 1: MISSED') : '',
  ]);
  return markdownTable(['contender', 'cmds/acquire', 'cmds/release', 'cmds/failed attempt', 'commands', 'target'], rows);
}

function meetsExpectedUsage(usage: CommandUsage): boolean {
  return (Object.keys(EXPECTED_OURS_USAGE) as (keyof typeof EXPECTED_OURS_USAGE)[]).every((op) => usage[op] === EXPECTED_OURS_USAGE[op]);
}

function isOurs(label: string): boolean {
  return label.startsWith('ours');
}

async function main(): Promise<void> {
  const prefix = uniquePrefix('bench');
  const clients = await connect();
  try {
    const environment = await describeEnvironment(clients.admin);
    const contenders = await contendersOn(clients, prefix);
    const usage = new Map<Contender, CommandUsage>();
    for (const contender of contenders) usage.set(contender, await measureCommandUsage(contender, COUNT_SAMPLES));

    const benchCases = cases(contenders);
    const slicesPerRound = benchCases.reduce((sum, c) => sum + c.entrants.length, 0);
    // Whole blocks of the balanced order only, so that no entrant gets the favourable slot more often.
    const block = williamsBlockLength(contenders.length);
    const affordable = Math.floor((BENCH_SECONDS * 1000) / (slicesPerRound * SLICE_MS)) - WARMUP_ROUNDS;
    const rounds = Math.max(block, affordable - (affordable % block));
    console.error(`${rounds} rounds (+${WARMUP_ROUNDS} warm-up) of ${slicesPerRound} slices of ${SLICE_MS} ms`);
    const results = await runPairedRounds(benchCases, rounds, WARMUP_ROUNDS, (round) => {
      if (round >= 0 && (round + 1) % 5 === 0) console.error(`round ${round + 1}/${rounds} done`);
    });

    console.log(`\n${environment}; ${rounds} paired rounds of ${SLICE_MS} ms slices, TTL ${TTL_MS} ms\n`);
    console.log(throughputTable(results));
    console.log("\nRedis commands per operation (counted on each contender's client, sequential)\n");
    console.log(usageTable(usage));
    if (![...usage].every(([c, u]) => !isOurs(c.label) || meetsExpectedUsage(u))) process.exitCode = 1;
  } finally {
    await deleteKeys(clients.admin, prefix);
    await deleteKeys(clients.admin, peerKeyPrefix(prefix));
    await Promise.all(Object.values(clients).map((client) => client.quit()));
  }
}

await main();
