import { markdownTable } from '../support/table.js';
import type { StoreUsage } from './store-meter.js';
import type { StoreWorkResult } from './store-work.js';

/** How far the leader's store work per job-tick may grow from the fewest nodes' figure: the issue's "flat". */
const FLAT_RATIO = 1.1;

/** One setup's two modes: every node attempts every tick (`locked`), or only the leader does. */
export interface StoreWorkRow {
  readonly nodes: number;
  readonly locked: StoreWorkResult | { readonly failure: string };
  readonly leader: StoreWorkResult | { readonly failure: string };
}

/** Store work per job-tick that ran: the busy window's, less the idle window's (the nodes' presence). */
interface PerJobTick {
  readonly commands?: number;
  readonly executionMicros?: number;
  readonly cpuMicros?: number;
}

function perJobTick(result: StoreWorkResult): PerJobTick {
  // The occurrences that ran: a tick cron skipped on a late event loop made no call on any node.
  const jobTicks = result.once + result.twiceOrMore;
  const tickPart = (read: (usage: StoreUsage) => number | undefined) => {
    const [busy, idle] = [read(result.busy), read(result.idle)];
    return busy === undefined || idle === undefined || jobTicks === 0 ? undefined : (busy - idle) / jobTicks;
  };
  return {
    commands: tickPart((usage) => usage.commandsExecuted),
    executionMicros: tickPart((usage) => usage.executionMicros),
    cpuMicros: tickPart((usage) => usage.cpuMicros),
  };
}

const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
const count = (value: number) => Math.round(value).toLocaleString('en-US');
const measured = (result: StoreWorkRow['locked']): result is StoreWorkResult => !('failure' in result);

/** The rows, then whether the leader's figures stay within 10 % of the fewest nodes'. */
export function storeWorkTable(rows: readonly StoreWorkRow[], store: string): string {
  const [calls, time] = store === 'Redis' ? ['commands', 'script µs'] : ['statements', 'statement µs'];
  const lines = rows.map((row) => {
    const pairOf = (show: (result: StoreWorkResult) => string) =>
      [row.locked, row.leader].map((result) => (measured(result) ? show(result) : 'failed')).join(' → ');
    const pair = (read: (figures: PerJobTick) => number | undefined, digits: number) =>
      pairOf((result) => fixed(read(perJobTick(result)), digits));
    const leader = measured(row.leader) ? row.leader : undefined;
    const presence = leader?.idle.commandsExecuted;
    return [
      String(row.nodes),
      leader ? `${count(leader.jobs)} × ${leader.ticks}` : '—',
      pair((figures) => figures.commands, 2),
      pair((figures) => figures.executionMicros, 2),
      pair((figures) => figures.cpuMicros, 2),
      leader && presence !== undefined ? fixed(presence / leader.nodes / leader.windowSeconds, 1) : '—',
      leader ? `${pairOf((result) => count(result.once))} of ${count(leader.jobs * leader.ticks)}` : '—',
      leader ? count(leader.skips.follower ?? 0) : '—',
    ];
  });
  const table = markdownTable(
    [
      'nodes',
      'jobs × ticks',
      `${store} ${calls} / job-tick, every node → leader`,
      `${store} ${time} / job-tick, every node → leader`,
      `${store} CPU µs / job-tick, every node → leader`,
      `presence ${calls} / node / s (leader run)`,
      'occurrences run once, every node → leader',
      'follower skips',
    ],
    lines,
  );
  const notes = rows.flatMap((row) =>
    (['locked', 'leader'] as const).flatMap((mode) => {
      const result = row[mode];
      if (!measured(result)) return [`- ${row.nodes} nodes, ${mode}: could not run: ${result.failure}`];
      const twice = result.twiceOrMore
        ? [`- ${row.nodes} nodes, ${mode}: ${result.twiceOrMore} occurrences ran twice or more`]
        : [];
      const warnings = result.warnings
        ? [`- ${row.nodes} nodes, ${mode}: ${result.warnings} warnings (first: ${result.firstWarnings[0]})`]
        : [];
      return [...twice, ...warnings];
    }),
  );
  return [table, '', ...verdicts(rows, calls, time), ...notes].join('\n');
}

function verdicts(rows: readonly StoreWorkRow[], calls: string, time: string): string[] {
  const leaders = rows.flatMap((row) => (measured(row.leader) ? [row.leader] : []));
  if (leaders.length < 2) return [];
  const [fewest, ...more] = [...leaders].sort((a, b) => a.nodes - b.nodes);
  const base = perJobTick(fewest);
  const lines = more.map((result) => {
    const figures = perJobTick(result);
    const ratio = (read: (f: PerJobTick) => number | undefined) => {
      const [value, reference] = [read(figures), read(base)];
      return value === undefined || reference === undefined ? undefined : value / reference;
    };
    const commands = ratio((f) => f.commands);
    const execution = ratio((f) => f.executionMicros);
    const cpu = ratio((f) => f.cpuMicros);
    // Calls are counts, whatever the load; times on shared cores wander by more than 10 %, so they are shown, not judged.
    const judged = commands ?? cpu;
    const verdict =
      judged === undefined
        ? 'no verdict (no occurrence ran)'
        : Math.abs(judged - 1) <= FLAT_RATIO - 1
          ? 'MET'
          : 'MISSED';
    return `- ${result.nodes} nodes against ${fewest.nodes}: ${calls} × ${fixed(commands, 3)}, ${time} × ${fixed(execution, 3)}, CPU × ${fixed(cpu, 3)}: ${verdict}`;
  });
  return [`Leader's store work per job-tick within 10 % of ${fewest.nodes} node(s):`, ...lines];
}
