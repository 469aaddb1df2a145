import type { Cluster } from 'ioredis';
import type { ClusterNode, HistoryEntry, JobOverview } from '../../lib/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { nextEvent } from '../support/lock-events.js';
import { deleteClusterKeys } from '../support/redis-cluster.js';
import { closeSchedulerApps } from '../support/scheduler-app.js';
import { sharedRedisCluster, type SharedRedisCluster } from '../support/shared-redis-cluster.js';
import { uniquePrefix } from '../support/shared-redis.js';
import {
  HEARTBEAT,
  JOB_NAMES,
  RunGate,
  redisOperatorProvider,
  startOperatedApp,
  waitForNodes,
} from './support/operated-app.js';
import { placementOf } from '../topologies/cluster-placement.js';
import { Operator, runCliInProcess } from './support/run-cli.js';

let redisCluster: SharedRedisCluster;
let client: Cluster;
const gate = new RunGate();
const keyPrefix = uniquePrefix('cli-cluster');

beforeAll(async () => {
  redisCluster = await sharedRedisCluster();
  client = redisCluster.connect();
});
afterAll(async () => {
  gate.openAll();
  await closeSchedulerApps();
  // The app was handed the client, so it never closes it.
  await deleteClusterKeys(client, keyPrefix);
  await client.quit();
});

describe('nest-scheduler-lock on a Redis Cluster (3 masters)', () => {
  it('reads and steers the jobs of an app on the Cluster, through a list of startup nodes or --cluster', async () => {
    const app = await startOperatedApp('node-a', gate, { redis: client, keyPrefix });
    await waitForNodes(redisOperatorProvider(client, keyPrefix), ['node-a']);
    const [first, second, third] = redisCluster.ports;
    const connection = ['--prefix', keyPrefix, '--heartbeat', HEARTBEAT];
    // The views and actions in this process; the built bin once, through one node with --cluster, below.
    const operator = new Operator(
      ['--redis', `127.0.0.1:${first},127.0.0.1:${second}`, ...connection],
      {},
      runCliInProcess,
    );

    const jobs = await operator.json<JobOverview[]>('jobs');
    expect(jobs.map((job) => [job.jobName, job.nodes])).toEqual(JOB_NAMES.map((name) => [name, ['node-a']]));

    gate.hold('noon');
    const started = nextEvent(app.events$, jobEvent('started', 'noon'));
    expect(await operator.text('trigger', 'noon', '--actor', 'ops:alice')).toMatch(
      /^Triggered noon: running on node-a /,
    );
    await started;
    expect(await operator.json<JobOverview>('job', 'noon')).toMatchObject({ holdingNode: 'node-a' });

    const lost = nextEvent(app.events$, jobEvent('lost', 'noon'));
    const releaseFailed = nextEvent(app.events$, jobEvent('release-failed', 'noon'));
    await operator.text('unlock', 'noon', '--actor', 'ops:alice');
    expect(await lost).toMatchObject({ reason: 'not-owner' });
    // The run ends on its aborted signal; its release finds the lock gone.
    expect(await releaseFailed).toMatchObject({ reason: 'not-owner' });
    const history = await operator.json<HistoryEntry[]>('history', 'noon');
    expect(history[0]).toMatchObject({ type: 'run', outcome: 'lost', node: 'node-a', manual: { actor: 'ops:alice' } });
    expect(history.slice(1).map((entry) => entry.type)).toEqual(['unlock', 'trigger']);

    const throughOneNode = new Operator(['--cluster', '--redis', `redis://127.0.0.1:${third}`, ...connection]);
    const nodes = await throughOneNode.json<ClusterNode[]>('nodes');
    expect(nodes.map((node) => node.node)).toEqual(['node-a']);
  });

  it('without --cluster, through a node that does not serve the key: exit code 1, what Redis answered, the hint', async () => {
    const key = `${keyPrefix}:nodes`;
    const { slot, master } = await placementOf(client, key);
    const other = redisCluster.ports.find((port) => `127.0.0.1:${port}` !== master)!;
    expect(await runCliInProcess(['nodes', '--redis', `redis://127.0.0.1:${other}`, '--prefix', keyPrefix])).toEqual({
      code: 1,
      stdout: '',
      stderr: `nest-scheduler-lock: Redis 127.0.0.1:${other} answered: MOVED ${slot} ${master} (a Redis Cluster: add --cluster)\n`,
    });
  });
});
