import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { SHARED_REDIS_URL } from '../support/shared-redis.js';

const WORKER = fileURLToPath(new URL('../../.build/test/lease/fixtures/fencing-worker.js', import.meta.url));
const PROCESSES = 5;
const ACQUISITIONS = 200;

/** Runs the fencing worker as a separate process and resolves to the tokens it got. */
function runWorker(keyPrefix: string): Promise<number[]> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WORKER], {
      env: { ...process.env, REDIS_URL: SHARED_REDIS_URL, KEY_PREFIX: keyPrefix, ACQUISITIONS: String(ACQUISITIONS) },
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(output).tokens) : reject(new Error(`worker exited with ${code}`)),
    );
  });
}

describe('fencing tokens across processes', () => {
  const shared = useSharedRedisPrefix('fencing');

  it(`increase strictly across ${PROCESSES} processes x ${ACQUISITIONS} acquisitions, and after the lock key is deleted by hand`, async () => {
    const startedAt = Date.now();
    const workers = Array.from({ length: PROCESSES }, () => runWorker(shared.prefix));
    const lockKey = `${shared.prefix}:{fenced}`;
    const logKey = `${shared.prefix}:log`;
    // While the workers run, delete the held lock key by hand a few times, noting the highest token
    // logged before each deletion (a plain lock keeps no fence key: its token is the server's clock).
    const deletions: number[] = [];
    while (deletions.length < 5) {
      const logged = (await shared.client.lrange(logKey, 0, -1)).map(Number);
      const issued = Math.max(0, ...logged);
      if (issued > 0 && logged.length >= (deletions.length + 1) * 100) {
        deletions.push(issued);
        await shared.client.del(lockKey);
      } else {
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    }
    const perProcess = await Promise.all(workers);
    const log = (await shared.client.lrange(logKey, 0, -1)).map(Number);

    const all = perProcess.flat();
    expect(all).toHaveLength(PROCESSES * ACQUISITIONS);
    expect(new Set(all).size).toBe(all.length); // no token handed out twice
    for (const tokens of perProcess) {
      expect(tokens).toEqual([...tokens].sort((a, b) => a - b)); // each process sees them rise
    }
    // In the order the lock was actually taken (logged under the lock), tokens only rise, except where
    // a hand deletion let two holders overlap for a moment; even then no token goes back below the
    // highest one issued before the deletion.
    const inversions = log.filter((token, i) => i > 0 && token < log[i - 1]);
    expect(inversions.length).toBeLessThanOrEqual(deletions.length);
    for (const issuedBefore of deletions) {
      const after = log.slice(log.indexOf(issuedBefore) + 1);
      expect(after.every((token) => token > issuedBefore)).toBe(true);
    }
    // Tokens are the server's clock in µs (or the last token plus one), safe integers of JavaScript.
    expect(all.every((token) => Number.isSafeInteger(token) && token > startedAt * 1000)).toBe(true);
  });
});
