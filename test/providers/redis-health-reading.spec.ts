import type { Redis } from 'ioredis';
import type { CatalogueJob, ClusterNode } from '../../lib/operators/cluster-records.js';
import { RedisLockProvider } from '../../lib/providers/redis/index.js';
import { usePrivateRedisServer } from '../support/private-redis.js';
import { openRedis } from '../support/redis-client-choice.js';
import { recordCommands, type CommandRecorder } from '../support/redis-monitor.js';
import { uniquePrefix } from '../support/shared-redis.js';

const JOBS = 50;
const LIMIT = 20;

const redis = usePrivateRedisServer();
let client: Redis;
let recorder: CommandRecorder;
let provider: RedisLockProvider;

beforeEach(async () => {
  client = openRedis(redis.server.url);
  provider = new RedisLockProvider(client, { keyPrefix: uniquePrefix('health-reading'), node: 'node-a' });
  recorder = await recordCommands(redis.admin);
});
afterEach(async () => {
  await recorder.close();
  client.disconnect();
});

const entry = (index: number): CatalogueJob => ({
  jobName: `job-${index}`,
  lockName: `lock-${index}`,
  kind: 'interval',
  schedule: '1000',
  lockAtMostFor: 60_000,
  lockAtLeastFor: 0,
  occurrence: false,
  timeZone: null,
  lease: null,
});

const node = (jobs: number): ClusterNode => ({
  node: 'node-a',
  version: '1',
  startedAt: new Date(0),
  lastSeen: new Date(),
  jobs: Array.from({ length: jobs }, (_, index) => `job-${index}`),
  elections: [],
});

describe("the health watch's reading on one Redis server", () => {
  it(`reads the nodes and ${JOBS} jobs' locks in one command, and a job new since the last reading in one more`, async () => {
    const operators = provider.operatorProvider();
    await operators.publish(
      node(JOBS),
      Array.from({ length: JOBS }, (_, index) => entry(index)),
      new Map(),
      { lease: 1, unhealthy: {} },
    );
    // The first reading knows no job yet, and the server no script (EVAL after NOSCRIPT).
    expect((await operators.clusterReading(LIMIT)).readings.size).toBe(JOBS);
    await recorder.take();

    const reading = await operators.clusterReading(LIMIT);
    expect(await recorder.take()).toEqual(['evalsha']);
    expect([reading.nodes.length, reading.jobs.length, reading.readings.size]).toEqual([1, JOBS, JOBS]);

    await operators.publish(node(JOBS + 1), [entry(JOBS)], new Map(), { lease: 1, unhealthy: {} });
    await recorder.take();
    expect((await operators.clusterReading(LIMIT)).readings.has(`lock-${JOBS}`)).toBe(true);
    expect(await recorder.take()).toEqual(['evalsha', 'evalsha']);
    expect((await operators.clusterReading(LIMIT)).readings.size).toBe(JOBS + 1);
    expect(await recorder.take()).toEqual(['evalsha']);
  });
});
