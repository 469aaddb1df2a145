/**
 * What each contender's lock operations cost Redis itself: instructions executed by a private
 * redis-server running under valgrind's callgrind, less its timer's, per uncontended cycle (take +
 * release) and per failed attempt. Unlike time on shared cores, an instruction count repeats from run to run, so it
 * pins down a difference of a few percent that the timed benchmarks can only bracket. It tells how
 * much of our gap to the raw floor is the fence (raw → fenced floor) and how much is ours (fenced
 * floor → ours).
 *
 * Run: `npm run bench:redis-cost` (needs valgrind; env REDIS_COST_OPS=2000 operations per figure).
 */
import { Redis } from 'ioredis';
import type { Contender } from './contenders/contender.js';
import { fencedFloorContender } from './contenders/fenced-floor.js';
import { oursContender } from './contenders/ours.js';
import { peerContender } from './contenders/peer.js';
import { rawContender } from './contenders/raw.js';
import { startCallgrindRedis, type CallgrindRedis } from './support/callgrind-redis.js';
import { describeEnvironment, numberFromEnv } from './support/environment.js';
import { markdownTable } from './support/table.js';
import { RedisLockProvider } from 'nest-scheduler-lock/redis';

const OPS = numberFromEnv('REDIS_COST_OPS', 2_000);
const WARMUP_OPS = 50;
const TTL_MS = 30_000;

/** Instructions per call of `op`, over {@link OPS} sequential calls after a warm-up. */
async function instructionsPerOp(server: CallgrindRedis, op: () => Promise<unknown>): Promise<number> {
  for (let i = 0; i < WARMUP_OPS; i++) await op();
  await server.zero();
  for (let i = 0; i < OPS; i++) await op();
  return (await server.readCommands()) / OPS;
}

/**
 * What a scheduled job's lock costs Redis per run with the operator features (pause check, run history, in
 * `acquire-job.lua` / `claim-occurrence.lua` and `finish.lua`), against the same run without them: a plain
 * `lock()` + `unlock()`, and an occurrence claim released without a history entry (the release of before).
 */
async function jobRunCosts(): Promise<string[][]> {
  const provider = new RedisLockProvider(connect(), { keyPrefix: 'jobs', node: 'bench' });
  const config = { name: 'job', lockAtMostFor: TTL_MS, lockAtLeastFor: 0 };
  const report = { startedAt: new Date(), durationMs: 12, attempt: 1 };
  let occurrence = 0;
  const taken = <L>(claim: { lock: L } | { refused: string }): L => {
    if (!('lock' in claim)) throw new Error(`not taken: ${claim.refused}`);
    return claim.lock;
  };
  const plain = await instructionsPerOp(server, async () => (await provider.lock(config))!.unlock());
  const job = await instructionsPerOp(server, async () =>
    taken(await provider.lockJob(config, false)).finish!('succeeded', report),
  );
  const claimOnly = await instructionsPerOp(server, async () =>
    taken(await provider.lockOccurrence(config, new Date(++occurrence))).finish!('succeeded'),
  );
  const claimWithHistory = await instructionsPerOp(server, async () => {
    const due = new Date(++occurrence);
    return taken(await provider.lockOccurrence(config, due)).finish!('succeeded', { ...report, occurrence: due });
  });
  const count = (instructions: number) => Math.round(instructions).toLocaleString('en-US');
  return [
    ['interval / timeout: lock() + unlock(), no pause check, no history', count(plain), '1.00'],
    ['interval / timeout: lockJob() + finish() with history', count(job), (job / plain).toFixed(2)],
    ['cron occurrence: claim + release with the record only', count(claimOnly), '1.00'],
    [
      'cron occurrence: claim + finish() with history',
      count(claimWithHistory),
      (claimWithHistory / claimOnly).toFixed(2),
    ],
  ];
}

const server = await startCallgrindRedis();
const clients: Redis[] = [];
const connect = () => {
  const client = new Redis(server.port, '127.0.0.1');
  clients.push(client);
  return client;
};
try {
  const holder = connect();
  const settings = (keyPrefix: string) => ({ keyPrefix, ttlMs: TTL_MS });
  const contenders: Contender[] = [
    await rawContender(connect(), settings('raw')),
    await fencedFloorContender(connect(), settings('fenced')),
    oursContender(connect(), settings('ours'), 1),
    peerContender(connect(), settings('peer')),
  ];
  for (const contender of contenders) await contender.holdElsewhere(0, holder);

  const ping = await instructionsPerOp(server, () => holder.ping());
  const costs = [];
  for (const contender of contenders) {
    const cycle = await instructionsPerOp(server, () => contender.cycle(0));
    const attempt = await instructionsPerOp(server, () => contender.attemptHeld(0));
    costs.push({ label: contender.label, cycle, attempt });
  }
  // Raw is the first contender, the fenced floor the second: the lock-cycle target is set against the floor.
  const [raw, floor] = costs;
  const count = (instructions: number) => Math.round(instructions).toLocaleString('en-US');
  const rows = costs.map(({ label, cycle, attempt }) => [
    label,
    count(cycle),
    (cycle / raw.cycle).toFixed(2),
    (cycle / floor.cycle).toFixed(3),
    count(attempt),
    (attempt / raw.attempt).toFixed(2),
    (attempt / floor.attempt).toFixed(3),
  ]);
  console.log(
    `${await describeEnvironment(holder)}; redis-server under callgrind, ${OPS} sequential operations per figure\n`,
  );
  const perCycle = ['Redis instructions / cycle', '× raw', '× fenced floor'];
  const perAttempt = ['Redis instructions / failed attempt', '× raw', '× fenced floor'];
  console.log(markdownTable(['contender', ...perCycle, ...perAttempt], rows));
  console.log(`\nFor scale: one PING round trip costs Redis ${Math.round(ping).toLocaleString('en-US')} instructions.`);
  console.log(
    `\n${markdownTable(["a scheduled job's run", 'Redis instructions / run', '× without history'], await jobRunCosts())}`,
  );
} finally {
  for (const client of clients) client.disconnect();
  await server.kill();
}
