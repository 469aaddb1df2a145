import type { Redis } from 'ioredis';
import { type LockConfiguration, type SimpleLock } from '../../lib/provider/index.js';
import { type OccurrenceClaim } from '../../lib/provider/index.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { openRedis } from '../support/redis-client-choice.js';
import { recordCommands, type CommandRecorder } from '../support/redis-monitor.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { blockFor } from '../support/timing.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

const JOBS = 50;
const OCCURRENCE = new Date(1_700_000_000_000);

const redis = usePrivateRedisServer();
let client: Redis;
let recorder: CommandRecorder;
let provider: RedisLockProvider;

beforeEach(async () => {
  client = openRedis(redis.server.url);
  provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('batch'), node: 'node-a' });
  recorder = await recordCommands(redis.admin);
  // Once per server each script arrives by EVAL after a NOSCRIPT: done here, so the tests count round trips.
  const warmUp = await provider.lockOccurrence(job(-1), OCCURRENCE);
  if ('lock' in warmUp) await warmUp.lock.finish!('succeeded', { startedAt: new Date(0), durationMs: 0, attempt: 1 });
});
afterEach(async () => {
  await recorder.close();
  client.disconnect();
});

const job = (i: number): LockConfiguration => ({ name: `tenant-${i}`, lockAtMostFor: 10_000, lockAtLeastFor: 0 });
const names = Array.from({ length: JOBS }, (_, i) => i);

/** The script calls clients sent since the last look (EVALSHA, or EVAL when the server lacked the script). */
async function scriptCalls(): Promise<number> {
  return (await recorder.take()).filter((command) => command === 'evalsha' || command === 'eval').length;
}

describe('job scripts batched per turn of the event loop', () => {
  it(`claims the occurrences of ${JOBS} jobs due together in one script call, each with its own reply`, async () => {
    await provider.operatorProvider().pause('tenant-7', { actor: 'ops' });
    const held = await provider.lockJob(job(9), false);
    await scriptCalls();

    const claims = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));

    expect(await scriptCalls()).toBe(1);
    expect(claims[7]).toEqual({ refused: 'paused' });
    expect(claims[9]).toEqual({ refused: 'locked' });
    const locks = claims.flatMap((claim) => ('lock' in claim ? [claim.lock] : []));
    expect(locks).toHaveLength(JOBS - 2);
    // Each name's token, drawn from the server's clock within the one script call.
    expect(new Set(locks.map((lock) => Math.floor(lock.fencingToken! / 1_000_000))).size).toBeLessThanOrEqual(2);
    // The same occurrence again: every job answers for itself that it already ran (or is running).
    const again = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));
    expect(again.filter((claim) => 'refused' in claim && claim.refused === 'already-ran')).toHaveLength(JOBS - 2);
    expect('lock' in held).toBe(true);
  });

  it(`finishes ${JOBS} runs that end together in one script call, each in its job's history`, async () => {
    const claims = await Promise.all(names.map((i) => provider.lockOccurrence(job(i), OCCURRENCE)));
    const locks = claims.map((claim) => (claim as { lock: SimpleLock }).lock);
    await scriptCalls();

    const report = { startedAt: new Date(), durationMs: 3, attempt: 1, occurrence: OCCURRENCE };
    await Promise.all(locks.map((lock, i) => lock.finish!(i % 2 === 0 ? 'succeeded' : 'failed', report)));

    expect(await scriptCalls()).toBe(1);
    const store = provider.operatorProvider();
    const histories = await Promise.all(names.map((i) => store.history(`tenant-${i}`, 5)));
    histories.forEach((history, i) =>
      expect(history).toMatchObject([{ type: 'run', outcome: i % 2 === 0 ? 'succeeded' : 'failed', node: 'node-a' }]),
    );
    expect(await provider.readJobRecord('tenant-1')).toMatchObject({ state: 'failed', held: false });
  });

  it('takes job locks due together in one script call; locks taken apart go apart', async () => {
    await scriptCalls();
    const together = await Promise.all(names.map((i) => provider.lockJob(job(i), false)));
    expect(await scriptCalls()).toBe(1);
    expect(together.every((claim) => 'lock' in claim)).toBe(true);

    for (const claim of together) if ('lock' in claim) await claim.lock.unlock();
    await scriptCalls();
    await provider.lockJob(job(0), false);
    await provider.lockJob(job(1), false);
    expect(await scriptCalls()).toBe(2);
  });

  it('claims a burst that cron fires over two timers phases in one script call', async () => {
    await scriptCalls();
    // Half the burst fires in a timers phase that runs 20 ms (hundreds of ticks); the other half's timers
    // come due meanwhile and fire in the next phase.
    const claims = await new Promise<OccurrenceClaim[]>((resolve) => {
      setTimeout(() => {
        const first = names.slice(0, JOBS / 2).map((i) => provider.lockOccurrence(job(i), OCCURRENCE));
        setTimeout(() => {
          const rest = names.slice(JOBS / 2).map((i) => provider.lockOccurrence(job(i), OCCURRENCE));
          resolve(Promise.all([...first, ...rest]));
        }, 10);
        blockFor(20);
      }, 0);
    });

    expect(await scriptCalls()).toBe(1);
    expect(claims.filter((claim) => 'lock' in claim)).toHaveLength(JOBS);
  });
});
