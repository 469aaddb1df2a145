/**
 * Lease renewal cost with N held locks on one node (N = 1, 100, 10,000): Redis round trips per renewal
 * interval (from `INFO commandstats` of a private redis-server, so nothing else is counted) and this
 * process's CPU per renewed lock, for our single LeaseKeeper loop and for redis-semaphore's Mutex
 * (one refresh timer per lock), measured in the same run with the same lease and interval.
 *
 * Run: `npm run bench:renewal` (env RENEWAL_COUNTS=1,100,10000, RENEWAL_HOLD_SECONDS=4).
 */
import { Redis } from 'ioredis';
import { LockingTaskExecutor } from 'nest-scheduler-lock';
import { Mutex } from 'redis-semaphore';
import { startPrivateRedisServer } from '../test/support/redis-server.js';
import { describeEnvironment, numberFromEnv } from './support/environment.js';
import { markdownTable } from './support/table.js';
import { RedisLockProvider } from 'nest-scheduler-lock/redis';

const LEASE_MS = 3_000;
const INTERVAL_MS = LEASE_MS / 3;
const COUNTS = (process.env.RENEWAL_COUNTS ?? '1,100,10000').split(',').map(Number);
const HOLD_MS = numberFromEnv('RENEWAL_HOLD_SECONDS', 4) * 1_000;

/** Holds `count` locks until the returned release function is called. */
type Holder = (client: Redis, count: number) => Promise<() => Promise<void>>;

const contenders: Record<string, Holder> = {
  'ours (one LeaseKeeper loop)': async (client, count) => {
    const executor = new LockingTaskExecutor(new RedisLockProvider(client, { keyPrefix: 'renewal' }), {
      node: 'bench',
    });
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runs = await spreadOverOneInterval(count, (i) =>
      executor.executeWithLock(() => gate, { name: `lock-${i}`, lockAtMostFor: '1h', keepAlive: { lease: LEASE_MS } }),
    );
    return async () => {
      release();
      const results = await Promise.all(runs);
      if (!results.every((result) => result.executed)) throw new Error('a lock was not taken');
      await executor.shutdown(0);
    };
  },
  'redis-semaphore Mutex (timer per lock)': async (client, count) => {
    const acquiring = await spreadOverOneInterval(count, async (i) => {
      const mutex = new Mutex(client, `lock-${i}`, {
        lockTimeout: LEASE_MS,
        refreshInterval: INTERVAL_MS,
        acquireTimeout: 5_000,
      });
      await mutex.acquire();
      return mutex;
    });
    const mutexes = await Promise.all(acquiring);
    return async () => {
      await Promise.all(mutexes.map((mutex) => mutex.release()));
    };
  },
};

/**
 * Starts `count` acquisitions spread evenly over one renewal interval, as the locks of a busy node
 * would be, and returns what each start returned (promises are not awaited).
 */
async function spreadOverOneInterval<T>(count: number, start: (i: number) => T): Promise<T[]> {
  const started: T[] = [];
  const perSlice = Math.ceil(count / 20);
  for (let i = 0; i < count; i++) {
    started.push(start(i));
    if ((i + 1) % perSlice === 0) await sleep(INTERVAL_MS / 20);
  }
  // executeWithLock promises settle only at release: wait for the acquisitions, not the runs.
  await sleep(INTERVAL_MS / 2);
  return started;
}

/** Command counts so far, from `INFO commandstats`. */
interface CommandCalls {
  /** Client round trips: every command but those run inside scripts and the benchmark's own INFO. */
  roundTrips: number;
  /** Everything Redis executed, commands inside scripts included. */
  executed: number;
}

/**
 * Redis counts the commands a script runs in `commandstats` too; both contenders renew only through
 * scripts, so a round trip is an EVALSHA (or EVAL) call, and the rest are what the scripts ran.
 */
async function commandCalls(client: Redis): Promise<CommandCalls> {
  const stats = await client.info('commandstats');
  const calls = { roundTrips: 0, executed: 0 };
  for (const [, name, count] of stats.matchAll(/cmdstat_([^:]+):calls=(\d+)/g)) {
    if (name === 'info') continue;
    calls.executed += Number(count);
    if (name.startsWith('eval')) calls.roundTrips += Number(count);
  }
  return calls;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const server = await startPrivateRedisServer();
const client = new Redis(server.port, '127.0.0.1');
const observer = new Redis(server.port, '127.0.0.1');
const rows: string[][] = [];
try {
  console.log(
    `Lease renewal, lease ${LEASE_MS} ms, renewal every ${INTERVAL_MS} ms, measured over ${HOLD_MS / 1_000} s of holding`,
  );
  console.log(await describeEnvironment(observer));
  for (const count of COUNTS) {
    for (const [name, hold] of Object.entries(contenders)) {
      const release = await hold(client, count);
      const callsBefore = await commandCalls(observer);
      const cpuBefore = process.cpuUsage();
      await sleep(HOLD_MS);
      const cpu = process.cpuUsage(cpuBefore);
      const callsAfter = await commandCalls(observer);
      await release();
      const intervals = HOLD_MS / INTERVAL_MS;
      const cpuMs = (cpu.user + cpu.system) / 1_000;
      rows.push([
        String(count),
        name,
        ((callsAfter.roundTrips - callsBefore.roundTrips) / intervals).toFixed(2),
        ((callsAfter.executed - callsBefore.executed) / (HOLD_MS / 1_000)).toFixed(0),
        (cpuMs / (HOLD_MS / 1_000)).toFixed(1),
        ((cpuMs * 1_000) / (count * intervals)).toFixed(1),
      ]);
    }
  }
  console.log(
    markdownTable(
      [
        'held locks',
        'contender',
        'round trips / interval',
        'Redis commands executed / s',
        'node CPU ms / s',
        'CPU µs / renewed lock',
      ],
      rows,
    ),
  );
} finally {
  client.disconnect();
  observer.disconnect();
  await server.kill();
}
