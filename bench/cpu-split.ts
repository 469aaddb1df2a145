/**
 * Where a lock operation's cost goes at concurrency 64: this process's CPU and Redis's CPU (from
 * `INFO commandstats` of a private redis-server) per uncontended cycle and per failed attempt, for the raw
 * floor, the fenced floor and ours, the contenders of `lock-cycle.ts`. At c=64 this process's CPU is the
 * bottleneck, so its CPU per operation is what the throughput ratios come from, and it moves much less
 * with the machine's load than throughput does. Paired rounds, as in `lock-cycle.ts`: each round runs
 * every contender once per case, and a ratio is only taken between slices of the same round.
 *
 * Run: `npm run bench:cpu` (env CPU_SPLIT_SECONDS=40 for the timed part, CPU_SPLIT_SLICE_MS=150).
 */
import { Redis } from 'ioredis';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import type { Contender } from './contenders/contender.js';
import { fencedFloorContender } from './contenders/fenced-floor.js';
import { oursContender } from './contenders/ours.js';
import { rawContender } from './contenders/raw.js';
import { describeEnvironment, loadAverage, numberFromEnv } from './support/environment.js';
import { pairedRatios, runPairedRounds, williamsBlockLength, type PairedCase } from './support/paired-rounds.js';
import { median } from './support/stats.js';
import { markdownTable } from './support/table.js';
import { measureThroughput } from './support/throughput.js';

const WORKERS = 64;
const SECONDS = numberFromEnv('CPU_SPLIT_SECONDS', 40);
const SLICE_MS = numberFromEnv('CPU_SPLIT_SLICE_MS', 150);
const WARMUP_ROUNDS = 2;
const TTL_MS = 30_000;

/** Redis CPU so far (µs), all commands but INFO. */
async function redisMicros(admin: Redis): Promise<number> {
  let micros = 0;
  for (const [, name, usec] of (await admin.info('commandstats')).matchAll(/cmdstat_([^:]+):calls=\d+,usec=(\d+)/g)) {
    if (name !== 'info') micros += Number(usec);
  }
  return micros;
}

/** One slice's cost per operation. */
interface SliceCost {
  readonly nodeMicros: number;
  readonly redisMicros: number;
}

const server = await startPrivateRedisServer();
const admin = new Redis(server.port, '127.0.0.1');
const holder = new Redis(server.port, '127.0.0.1');
const clients = [admin, holder];
const connect = () => {
  const client = new Redis(server.port, '127.0.0.1');
  clients.push(client);
  return client;
};
try {
  const settings = (keyPrefix: string) => ({ keyPrefix, ttlMs: TTL_MS });
  const contenders: Contender[] = [
    await rawContender(connect(), settings('raw')),
    await fencedFloorContender(connect(), settings('fenced')),
    oursContender(connect(), settings('ours'), WORKERS),
  ];
  for (const contender of contenders) {
    await Promise.all(Array.from({ length: WORKERS }, (_, worker) => contender.holdElsewhere(worker, holder)));
  }
  // Per case, then per contender: the cost of every measured slice, in round order.
  const costs = new Map<string, Map<string, SliceCost[]>>();
  const pairedCase = (label: string, op: (c: Contender, worker: number) => Promise<void>): PairedCase => {
    const byContender = new Map(contenders.map((c): [string, SliceCost[]] => [c.label, []]));
    costs.set(label, byContender);
    return {
      label,
      entrants: contenders.map((contender) => ({
        label: contender.label,
        // Operations per second of this process's CPU: the paired ratios then compare CPU per operation.
        async measure() {
          const redisBefore = await redisMicros(admin);
          const cpuBefore = process.cpuUsage();
          const startedAt = performance.now();
          const opsPerSecond = await measureThroughput((worker) => op(contender, worker), WORKERS, SLICE_MS);
          const ops = (opsPerSecond * (performance.now() - startedAt)) / 1000;
          const cpu = process.cpuUsage(cpuBefore);
          const redis = (await redisMicros(admin)) - redisBefore;
          const cost = { nodeMicros: (cpu.user + cpu.system) / ops, redisMicros: redis / ops };
          byContender.get(contender.label)!.push(cost);
          return 1e6 / cost.nodeMicros;
        },
      })),
    };
  };
  const cases = [
    pairedCase(`uncontended cycle, c=${WORKERS}`, (c, worker) => c.cycle(worker)),
    pairedCase(`contended skip, c=${WORKERS}`, (c, worker) => c.attemptHeld(worker)),
  ];
  const block = williamsBlockLength(contenders.length);
  const affordable = Math.floor((SECONDS * 1000) / (cases.length * contenders.length * SLICE_MS)) - WARMUP_ROUNDS;
  const rounds = Math.max(block, affordable - (affordable % block));
  const environment = `${await describeEnvironment(admin)} · ${loadAverage()} at the start`;
  const results = await runPairedRounds(cases, rounds, WARMUP_ROUNDS);

  const rows = results.map((r) => {
    // The warm-up rounds' slices were recorded too; the paired results hold the measured rounds only.
    const slices = costs.get(r.caseLabel)!.get(r.label)!.slice(-rounds);
    const floor = results.find((other) => other.caseLabel === r.caseLabel && other.label.startsWith('fenced floor'))!;
    return [
      r.caseLabel,
      r.label,
      median(slices.map((s) => s.nodeMicros)).toFixed(2),
      // Ratio of operations per CPU-second, inverted: this contender's CPU per operation over the floor's.
      (1 / median(pairedRatios(r.samples, floor.samples))).toFixed(3),
      median(slices.map((s) => s.redisMicros)).toFixed(2),
    ];
  });
  console.log(`${environment}; c=${WORKERS}, ${rounds} paired rounds of ${SLICE_MS} ms slices, private redis-server\n`);
  const headers = ['case', 'contender', 'node CPU µs/op (median)', 'node CPU ÷ fenced floor (median of paired)'];
  console.log(markdownTable([...headers, 'Redis CPU µs/op (median)'], rows));
  console.log(`\n${loadAverage()} at the end`);
} finally {
  clients.forEach((client) => client.disconnect());
  await server.kill();
}
