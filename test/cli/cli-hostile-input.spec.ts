import type { HistoryEntry } from '../../lib/index.js';
import { freePort, startPrivateRedisServer } from '../support/redis-server.js';
import { waitUntil } from '../support/wait-until.js';
import { HEARTBEAT, redisOperatorProvider, useOperatedCluster } from './support/operated-app.js';
import { runCliInProcess, type CliRun } from './support/run-cli.js';

const cluster = useOperatedCluster('cli-hostile');
const { startNodes } = cluster;

/** A pause reason anyone allowed to steer can set: retitles the terminal, clears it, prints a forged line. */
const HOSTILE_REASON = '\u001b]0;PWNED\u0007\u001b[2J\u001b[31mRED\u001b[0m\r\nFAKE LINE: all good';
/** As the CLI prints it: every control character escaped, on one line. */
const ESCAPED_REASON = '\\u001b]0;PWNED\\u0007\\u001b[2J\\u001b[31mRED\\u001b[0m\\r\\nFAKE LINE: all good';
/** An actor that erases the line above and writes right to left. */
const HOSTILE_ACTOR = 'ops\u001b[1A\u001b[2K\u202eroot';
const ESCAPED_ACTOR = 'ops\\u001b[1A\\u001b[2K\\u202eroot';
/** A node name that rings and recolours; `node` comes from the app's configuration or the host name. */
const HOSTILE_NODE = 'node-\u001b[31ma\u0007';
const ESCAPED_NODE = 'node-\\u001b[31ma\\u0007';

/** The bytes of `text` a terminal runs rather than shows: C0 controls but the line feed, DEL, and C1 controls. */
function controlBytes(text: string): number[] {
  const bytes = [...Buffer.from(text, 'utf8')];
  // In UTF-8 a C1 control is 0xC2 followed by 0x80–0x9F.
  const c1 = bytes.flatMap((byte, index) => (byte === 0xc2 && bytes[index + 1] <= 0x9f ? [bytes[index + 1]] : []));
  return [...bytes.filter((byte) => (byte < 0x20 && byte !== 0x0a) || byte === 0x7f), ...c1];
}

/** The bidi and zero-width marks that reorder or hide what a terminal shows. */
function hiddenMarks(text: string): string[] {
  return text.match(/[\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g) ?? [];
}

describe('nest-scheduler-lock: text from Redis is printed escaped', () => {
  it('history, job, jobs and nodes escape hostile reasons, actors, errors and node names, byte for byte', async () => {
    await startNodes(HOSTILE_NODE);
    cluster.gate.failNext('sweep', HOSTILE_REASON);
    // The CLI, the page and the admin refuse such a note (exit 2); a store written some other way may hold one.
    const note = { actor: HOSTILE_ACTOR, reason: HOSTILE_REASON };
    const steer = ['--actor', HOSTILE_ACTOR, '--reason', HOSTILE_REASON];
    expect(await cluster.operator.run('trigger', 'sweep', ...steer)).toMatchObject({ code: 2, stdout: '' });
    const store = redisOperatorProvider(cluster.shared.client, cluster.shared.prefix);
    expect(await store.requestTrigger('sweep', 'sweep', note)).toMatchObject({ queued: true });
    await waitUntil(async () => {
      const history = await cluster.operator.json<HistoryEntry[]>('history', 'sweep');
      return history.some((entry) => entry.type === 'run' && entry.outcome === 'failed');
    }, 'the triggered run failed and is in the history');
    expect(await store.pause('sweep', note)).toBe(true);

    const printed: Record<string, CliRun> = {};
    for (const command of [['history', 'sweep'], ['job', 'sweep'], ['jobs'], ['nodes']]) {
      printed[command[0]] = await cluster.operator.run(...command);
    }
    for (const [command, { code, stdout, stderr }] of Object.entries(printed)) {
      expect({ command, code, stderr }).toEqual({ command, code: 0, stderr: '' });
      expect({ command, controls: controlBytes(stdout), marks: hiddenMarks(stdout) }).toEqual({
        command,
        controls: [],
        marks: [],
      });
      expect(stdout).not.toMatch(/^FAKE LINE/m);
    }
    const history = printed.history.stdout;
    expect(history).toContain(`reason: ${ESCAPED_REASON}`);
    expect(history).toContain(`error: ${ESCAPED_REASON}`);
    expect(history).toContain(`triggered by ${ESCAPED_ACTOR}`);
    expect(history).toContain(ESCAPED_NODE);
    // One line per entry: the header, the pause, the run and the trigger.
    expect(history.trimEnd().split('\n')).toHaveLength(4);
    expect(printed.job.stdout).toMatch(new RegExp(`^paused: +yes, by ${escapeRegExp(ESCAPED_ACTOR)} .*: `, 'm'));
    expect(printed.job.stdout).toContain(`: ${ESCAPED_REASON}\n`);
    expect(printed.nodes.stdout).toContain(ESCAPED_NODE);

    // --json keeps the text as it is, escaped in JSON: C0 by JSON itself, C1 and the hidden marks too.
    const json = await cluster.operator.run('history', 'sweep', '--limit', '1', '--json');
    expect({ controls: controlBytes(json.stdout), marks: hiddenMarks(json.stdout) }).toEqual({
      controls: [],
      marks: [],
    });
    const [pause] = JSON.parse(json.stdout) as HistoryEntry[];
    expect(pause).toMatchObject({ type: 'pause', actor: HOSTILE_ACTOR, reason: HOSTILE_REASON });
  });

  it('caps --reason at 500 characters, as the status page does', async () => {
    await startNodes('node-a');
    const long = await cluster.operator.run('pause', 'sweep', '--reason', 'x'.repeat(501));
    expect(long.code).toBe(2);
    expect(long.stderr.split('\n')[0]).toBe('nest-scheduler-lock: --reason must be at most 500 characters (got 501)');
    expect(await cluster.operator.run('pause', 'sweep', '--reason', 'x'.repeat(500))).toMatchObject({ code: 0 });
  });
});

describe('nest-scheduler-lock: a Redis password is never printed', () => {
  const PASSWORD = 'S3cr3tPW-never-shown';

  it('not in usage errors, Redis failures or output, wherever the URL is typed', async () => {
    const server = await startPrivateRedisServer({ requirepass: PASSWORD });
    try {
      const url = `redis://:${PASSWORD}@127.0.0.1:${server.port}`;
      const unreachable = `redis://ops:${PASSWORD}@127.0.0.1:${await freePort()}`;
      const runs: [args: string[], env: NodeJS.ProcessEnv, code: number, says: string][] = [
        [['jobs', url], {}, 2, `jobs takes no job name (got "redis://:***@127.0.0.1:${server.port}")`],
        [[url, 'jobs'], {}, 2, `unknown command "redis://:***@127.0.0.1:${server.port}"`],
        [['job', 'report', 'x', url], {}, 2, `unexpected arguments: x redis://:***@127.0.0.1:${server.port}`],
        [['history', 'report', '--limit', url, '--redis', url], {}, 2, '--limit must be a whole number'],
        [['jobs', '--redis', url.replace('redis:', 'https:')], {}, 2, 'must be redis:// or rediss:// (got https://)'],
        [['jobs', '--redis', `:${PASSWORD}@127.0.0.1:${server.port}`, 'extra'], {}, 2, 'takes no job name'],
        [['jobs', '--redis', url.replace(PASSWORD, `wrong-${PASSWORD}`)], {}, 1, 'authentication failed'],
        [['jobs', '--redis', unreachable], {}, 1, 'is unreachable'],
        [['job', 'nope', '--redis', url], {}, 1, 'No node of the cluster runs a locked job named "nope"'],
        [['jobs', '--heartbeat', HEARTBEAT], { REDIS_URL: url }, 0, 'No live node runs a locked job'],
        [['jobs', '--json'], { REDIS_URL: url }, 0, '[]'],
      ];
      for (const [args, env, code, says] of runs) {
        const run = await runCliInProcess(args, env);
        const printed = run.stdout + run.stderr;
        expect({ args, code: run.code, shown: printed.includes(PASSWORD) }).toEqual({ args, code, shown: false });
        expect(printed).toContain(says);
      }
    } finally {
      await server.stop();
    }
  });
});

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
