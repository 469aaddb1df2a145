import { execFile, spawn } from 'node:child_process';
import { mkdtemp, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

/**
 * The zero-setup paths of `npm test` (test/support/with-redis.ts) and `npm run demo` (sample-app/demo.ts),
 * run for real in a fresh network namespace: only its own loopback, where nothing listens on 6379 and
 * no REDIS_URL of this machine can answer. Needs root (`ip netns`), as CI has.
 */

const WITH_REDIS = fileURLToPath(new URL('../../.build/test/support/with-redis.js', import.meta.url));
const DEMO = fileURLToPath(new URL('../../.build/sample-app/demo.js', import.meta.url));
const NAMESPACE = `nsl-zero-setup-${process.pid}`;
/** "Fails within seconds": a refused connection and a missing binary are known at once. */
const FAST_MS = 5_000;
const run = promisify(execFile);

/** What a command printed, how it ended and how long it took. */
interface Finished {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
  readonly ms: number;
}

/**
 * Runs `command` inside the namespace with this process's environment minus REDIS_URL, plus `env`; SIGKILLs it
 * after `timeoutMs`.
 */
function runInNamespace(command: string[], env: NodeJS.ProcessEnv = {}, timeoutMs = 20_000): Promise<Finished> {
  const { REDIS_URL: _unset, ...inherited } = process.env;
  const started = Date.now();
  // A run that never ends (a private server left running keeps its parent up) fails here, not at Jest's timeout.
  const child = spawn(ipCommand, ['netns', 'exec', NAMESPACE, ...command], {
    env: { ...inherited, ...env },
    timeout: timeoutMs,
    killSignal: 'SIGKILL',
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
  });
}

/** Whether a process with this PID exists. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** A node one-liner that PINGs REDIS_URL and prints the URL and the answer. */
const PING_REDIS_URL = [
  process.execPath,
  '--input-type=module',
  '-e',
  "import { Redis } from 'ioredis'; const r = new Redis(process.env.REDIS_URL);" +
    ' console.log(process.env.REDIS_URL, await r.ping()); r.disconnect();',
];

let pathWithoutRedisServer: string;
/** `ip`'s path, found on this process's PATH: the runs' own PATH may lack it. */
let ipCommand: string;

beforeAll(async () => {
  ipCommand = (await run('sh', ['-c', 'command -v ip'])).stdout.trim();
  await run('ip', ['netns', 'add', NAMESPACE]);
  await run('ip', ['-n', NAMESPACE, 'link', 'set', 'lo', 'up']);
  // A PATH holding node alone: as on a machine where redis-server was never installed.
  pathWithoutRedisServer = await mkdtemp(join(tmpdir(), 'nsl-no-redis-server-'));
  await symlink(process.execPath, join(pathWithoutRedisServer, 'node'));
});

afterAll(async () => {
  await run('ip', ['netns', 'delete', NAMESPACE]);
  await rm(pathWithoutRedisServer, { recursive: true, force: true });
});

describe('npm test (with-redis) in a namespace where nothing listens on 6379', () => {
  it('starts a private redis-server on a free port for the command, and stops it when the command ends', async () => {
    const result = await runInNamespace(['node', WITH_REDIS, ...PING_REDIS_URL]);

    expect(result).toMatchObject({ code: 0 });
    const [url, answer] = result.stdout.trim().split(' ');
    expect(answer).toBe('PONG');
    expect(url).toMatch(/^redis:\/\/127\.0\.0\.1:\d+$/);
    expect(url).not.toBe('redis://127.0.0.1:6379');
    const pid = Number(/\(pid (\d+)\)/.exec(result.stderr)?.[1]);
    expect(pid).toBeGreaterThan(0);
    expect(isRunning(pid)).toBe(false);
  });

  it('fails within seconds, printing the install line, when no redis-server is installed', async () => {
    const result = await runInNamespace(['node', WITH_REDIS, 'node', '-e', ''], { PATH: pathWithoutRedisServer });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('apt-get install redis-server');
    expect(result.ms).toBeLessThan(FAST_MS);
  });

  it('fails within seconds, naming REDIS_URL without its password, when it does not answer', async () => {
    const result = await runInNamespace(['node', WITH_REDIS, 'node', '-e', ''], {
      REDIS_URL: 'redis://:hunter2@127.0.0.1:6390',
    });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No Redis answers at REDIS_URL=redis://:***@127.0.0.1:6390');
    expect(result.stderr).not.toContain('hunter2');
    expect(result.ms).toBeLessThan(FAST_MS);
  });
});

describe('npm run demo in a namespace where nothing listens on 6379', () => {
  it('runs its instances on an embedded PostgreSQL when no redis-server is installed, and says so first', async () => {
    // PGlite compiles its WASM at start: seconds of CPU, many more on a busy machine.
    const result = await runInNamespace(['node', DEMO], { PATH: pathWithoutRedisServer, DEMO_SECONDS: '5' }, 120_000);

    expect(result.code).toBe(0);
    // Nothing on stderr but the cron package's own line for a tick a busy machine ran late.
    const lateTicks = /^(\[instance-\d+\] )?\[Cron\] Missed execution deadline by \d+ms for job.*\n?/gm;
    expect(result.stderr.replace(lateTicks, '')).toBe('');
    const lines = result.stdout.split('\n');
    expect(lines[0]).toMatch(
      /^No Redis at redis:\/\/127\.0\.0\.1:6379 and no redis-server to start one: .*embedded PostgreSQL/,
    );
    expect(lines[1]).toMatch(
      /^Running 3 instances .*embedded PostgreSQL postgres:\/\/postgres@127\.0\.0\.1:\d+\/postgres/,
    );
    expect(result.stdout).toMatch(/^runs: [1-9]\d* \(instance-\d: /m);
    expect(result.stdout).toContain('duplicates: 0');
  }, 150_000);

  it('fails within seconds naming the REDIS_URL asked for, not 6379, when it does not answer', async () => {
    const result = await runInNamespace(['node', DEMO], { REDIS_URL: 'redis://127.0.0.1:6390' });

    expect(result.code).toBe(1);
    expect(result.stderr).toContain('No Redis answers at REDIS_URL=redis://127.0.0.1:6390');
    expect(result.stderr).not.toContain('6379');
    expect(result.ms).toBeLessThan(FAST_MS);
  });

  it('runs its instances on a private redis-server and stops it at the end', async () => {
    const result = await runInNamespace(['node', DEMO], { DEMO_SECONDS: '2' });

    expect(result.code).toBe(0);
    expect(result.stdout).toMatch(/started a private redis-server at redis:\/\/127\.0\.0\.1:\d+ \(pid \d+\)/);
    expect(result.stdout).toContain('duplicates: 0');
    const pid = Number(/\(pid (\d+)\)/.exec(result.stdout)?.[1]);
    expect(isRunning(pid)).toBe(false);
  }, 60_000);
});
