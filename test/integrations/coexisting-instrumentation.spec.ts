import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { spawnJsonLinesProcess, type JsonLinesProcess } from '../support/json-lines-process.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { waitUntil } from '../support/wait-until.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';

// @nestjs/observe wraps every @Cron, @Interval and @Timeout handler (it patches
// ScheduleExplorer.prototype.wrapFunctionInTryCatchBlocks), and OpenTelemetry's ioredis instrumentation wraps
// every command, both registered before Nest starts, in an app whose locked jobs are also traced by the module
// (SchedulerLockTelemetry). The app runs as a plain Node process (fixtures/coexisting-app.ts, built by
// `npm run build:run`, which `npm test` runs first): in Jest, @nestjs/observe would patch another copy of @nestjs/schedule than the app's.

const FIXTURES = new URL('../../.build/test/integrations/fixtures/', import.meta.url);
const APP = fileURLToPath(new URL('coexisting-app.js', FIXTURES));
const PRELOAD = fileURLToPath(new URL('opentelemetry-preload.js', FIXTURES));

type Message =
  | { type: 'ready' }
  | { type: 'run'; job: string; lock?: string; fencingToken?: number; span?: string }
  | { type: 'observed'; name: string; lock?: string }
  | { type: 'event'; event: string; lockName: string; reason?: string; error?: string }
  | { type: 'span'; name: string; spanId: string; parentSpanId?: string; statement?: string };

/** Job runs observe's collector received: name and status. */
const reported: Array<{ name: string; status: string }> = [];
let collector: Server;
let endpoint: string;
beforeAll(async () => {
  collector = createServer((request, response) => {
    const body: Buffer[] = [];
    request.on('data', (chunk: Buffer) => body.push(chunk));
    request.on('end', () => {
      const batch = JSON.parse(gunzipSync(Buffer.concat(body)).toString()) as {
        jobs?: Array<{ n: string; s: string }>;
      };
      for (const job of batch.jobs ?? []) reported.push({ name: job.n, status: job.s });
      response.end('{}');
    });
  });
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  endpoint = `http://127.0.0.1:${(collector.address() as AddressInfo).port}`;
});
afterAll(() => new Promise((resolve) => collector.close(resolve)));

let app: JsonLinesProcess | undefined;
const shared = useSharedRedisPrefix('coexist', () => app?.kill());
const messages: Message[] = [];
beforeEach(() => {
  messages.length = 0;
  reported.length = 0;
});

const of = <T extends Message['type']>(type: T) =>
  messages.filter((message): message is Extract<Message, { type: T }> => message.type === type);

describe.each(['lock-first', 'observe-first'])('@nestjs/observe and OpenTelemetry in the app (%s)', (order) => {
  it('locks every job from its first tick, skips stay skips, and each wrapper sees the runs that ran', async () => {
    // Another node holds one job's lock for the whole test: each of its ticks here is a skip.
    const rival = new RedisLockProvider(shared.client, { keyPrefix: shared.prefix, node: 'node-b' });
    await rival.lock({ name: 'held-elsewhere', lockAtMostFor: 60_000, lockAtLeastFor: 0 });
    let exit: string | undefined;
    app = spawnJsonLinesProcess<Message>({
      script: APP,
      nodeArgs: ['--import', PRELOAD],
      env: { REDIS_URL: redisUrl(), KEY_PREFIX: shared.prefix, OBSERVE_ENDPOINT: endpoint, ORDER: order },
      onMessage: (message) => messages.push(message),
      onUnexpectedExit: (description) => (exit = description),
    });
    const settled = () => {
      if (exit) throw new Error(`The app exited: ${exit}`);
      const runs = of('run');
      return (
        runs.filter((run) => run.job === 'frequent').length >= 3 &&
        runs.some((run) => run.job === 'minutely') &&
        of('event').filter((e) => e.event === 'skipped' && e.lockName === 'held-elsewhere').length >= 3 &&
        of('event').some((e) => e.event === 'finished' && e.lockName === 'fails') &&
        ['minutely', 'frequent', 'fails', 'unlocked'].every((name) => reported.some((run) => run.name === name))
      );
    };
    await waitUntil(settled, 'runs, skips and observe reports', { timeoutMs: 40_000 }).catch((error: Error) => {
      const seen = JSON.stringify({ reported, messages: messages.filter((m) => m.type !== 'span').slice(-20) });
      throw new Error(`${error.message}\n${seen}\n${app?.diagnostics()}`);
    });

    const runs = of('run');
    // Locked from the first tick (the cron tick fired inside cron's constructor too), and currentLock() set.
    for (const run of runs.filter((run) => run.job !== 'unlocked')) {
      expect(run).toEqual({
        type: 'run',
        job: run.job,
        lock: run.job,
        fencingToken: expect.any(Number),
        span: expect.any(String),
      });
    }
    expect(runs.filter((run) => run.job === 'minutely')).toHaveLength(1);
    // Every skip stayed a skip: no run, no observe record, of the job held elsewhere.
    expect(runs.map((run) => run.job)).not.toContain('held-elsewhere');
    for (const skip of of('event').filter((e) => e.event === 'skipped')) expect(skip.reason).toBe('locked');
    expect(of('observed').map((run) => run.name)).not.toContain('held-elsewhere');
    expect(reported.map((run) => run.name)).not.toContain('held-elsewhere');
    // Observe opened its run inside the lock, for each locked run, and reported how it ended.
    for (const observed of of('observed').filter((run) => run.name !== 'unlocked'))
      expect(observed.lock).toBe(observed.name);
    expect(reported).toContainEqual({ name: 'minutely', status: 'completed' });
    expect(reported).toContainEqual({ name: 'fails', status: 'failed' });
    // A failure stays a failure for the lock too.
    expect(of('event').find((e) => e.event === 'finished' && e.lockName === 'fails')).toMatchObject({
      error: 'the report failed',
    });
    // OpenTelemetry: the handler's own ioredis command is a child of the module's run span; the lock's scripts
    // are traced by the ioredis instrumentation too (outside any run span: a claim is sent before its run).
    // A run's span ends (and is printed) after its release: the last run seen may still be going.
    const traced = ({ span: runSpan }: Extract<Message, { type: 'run' }>) =>
      of('span').some((span) => span.spanId === runSpan) &&
      of('span').some((span) => span.name === 'get' && span.parentSpanId === runSpan);
    const frequentRuns = runs.filter((run) => run.job === 'frequent');
    await waitUntil(() => frequentRuns.every(traced), "a run span with its handler's get span, per frequent run", {
      timeoutMs: 10_000,
    });
    const spans = of('span');
    const scripts = spans.filter((span) => span.name === 'evalsha' || span.name === 'eval');
    expect(scripts.length).toBeGreaterThan(0);
    const runSpans = new Set(runs.flatMap((run) => (run.span ? [run.span] : [])));
    for (const script of scripts) expect(runSpans.has(script.parentSpanId ?? '')).toBe(false);
  }, 60_000);
});

function redisUrl(): string {
  const { host, port } = shared.client.options;
  return `redis://${host}:${port}`;
}
