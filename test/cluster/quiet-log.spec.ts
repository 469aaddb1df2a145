import type { WorkerJobSpec, WorkerMessage } from './fixtures/worker-protocol.js';
import { isStartOf } from './message-matchers.js';
import { WorkerCluster } from './worker-cluster.js';
import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { uniquePrefix } from '../support/shared-redis.js';

const INSTANCES = ['A', 'B', 'C'];
/** Seconds of ticks watched on a healthy cluster, and how long (at least) Redis stays down. */
const QUIET_TICKS = 4;
const OUTAGE_SECONDS = 6;

/**
 * Issue 18's "quiet by default", with separate processes on Nest's default logger (every level,
 * debug and verbose included): a healthy cluster logs nothing per tick, and a Redis outage logs at most
 * one line when it starts and one when it ends, per node, whatever its users on the node (lock
 * attempts, heartbeats, trigger polls, catalogue writes) tried meanwhile.
 */
describe('three nodes on the default logger', () => {
  let server: PrivateRedisServer;
  let cluster: WorkerCluster | undefined;

  beforeAll(async () => {
    server = await startPrivateRedisServer();
  });
  afterEach(async () => {
    await cluster?.killAll();
    cluster = undefined;
  });
  afterAll(() => server.stop());

  it('log no line per tick, and at most two lines per node across a 6 s Redis outage', async () => {
    const job: WorkerJobSpec = { name: 'every-second', schedule: { cron: '* * * * * *' }, lockAtLeastFor: '500ms' };
    cluster = await WorkerCluster.start({
      // NEST_LOG_LEVEL empty: ConsoleLogger's defaults, every level (the cluster tests' workers log >=log).
      workers: INSTANCES.map((instance) => ({ instance, env: { NEST_LOG_LEVEL: '' } })),
      jobs: [job],
      keyPrefix: uniquePrefix('quiet'),
      redisUrl: server.url,
    });
    const workers = cluster;
    const linesSince = (at: number) => workers.logLines.filter((entry) => entry.at >= at);
    const runsSince = (at: number) => workers.starts(job.name).filter((start) => start.startedAt >= at).length;

    // Startup is over once the job has run: Nest's and the module's startup lines are behind.
    await workers.waitFor(isStartOf(job.name), 10_000, 'a first run');
    const healthySince = Date.now();
    await workers.waitUntil(() => runsSince(healthySince) >= QUIET_TICKS || undefined, 15_000, 'more runs');
    // Every node tried each of those ticks: each saw it run elsewhere or ran it.
    expect(linesSince(healthySince)).toEqual([]);

    // Down between runs (right after a run released its lock), so no run straddles the outage.
    const checked = workers.messages.length;
    await workers.waitUntil(
      () =>
        workers.messages.slice(checked).some((m) => m.kind === 'lock-event' && m.event.type === 'released') ||
        undefined,
      5_000,
      'a run to release its lock',
    );
    const downSince = Date.now();
    await server.kill();
    const storeErrors = (instance: string) =>
      workers.messages.filter((m) => isStoreErrorSkip(m, instance, downSince)).length;
    await workers.waitUntil(
      () => INSTANCES.every((instance) => storeErrors(instance) >= OUTAGE_SECONDS) || undefined,
      OUTAGE_SECONDS * 1000 + 15_000,
      `${OUTAGE_SECONDS} skipped ticks on every node`,
    );
    const upSince = Date.now();
    await server.start();
    await workers.waitUntil(() => runsSince(upSince) >= 2 || undefined, 20_000, 'runs once Redis is back');
    // Each node logs that Redis is back when its own client reconnects: give the last one a tick more.
    await workers.waitUntil(
      () => INSTANCES.every((instance) => backLine(workers, instance, upSince)) || undefined,
      10_000,
      'every node to log that Redis is back',
    );
    const quietAgain = Date.now();
    await workers.waitUntil(() => runsSince(quietAgain) >= 2 || undefined, 15_000, 'runs after the outage');

    const outageLines = linesSince(downSince);
    for (const instance of INSTANCES) {
      const lines = outageLines.filter((entry) => entry.instance === instance).map((entry) => entry.line);
      expect(lines).toEqual([
        expect.stringMatching(/ERROR \[SchedulerLock\] Redis 127\.0\.0\.1:\d+ is unreachable \(connection refused/),
        expect.stringMatching(/LOG \[SchedulerLock\] Redis 127\.0\.0\.1:\d+ is reachable again after \d+\.\ds/),
      ]);
    }
  }, 90_000);
});

function isStoreErrorSkip(message: WorkerMessage, instance: string, since: number): boolean {
  return (
    message.kind === 'lock-event' &&
    message.instance === instance &&
    message.event.type === 'skipped' &&
    message.event.reason === 'provider-error' &&
    message.event.at >= since
  );
}

function backLine(workers: WorkerCluster, instance: string, since: number): boolean {
  return workers.logLines.some(
    (entry) => entry.instance === instance && entry.at >= since && entry.line.includes('is reachable again'),
  );
}
