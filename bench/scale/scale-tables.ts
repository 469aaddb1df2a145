import { markdownTable } from '../support/table.js';
import type { PhaseResult } from './phase.js';
import { phaseMetrics, saturationCaveats, uncleanReasons, type PhaseMetrics } from './phase-metrics.js';

/**
 * The Redis instructions cell: a locked phase on a server under callgrind, with what the same server
 * executes idle (its timers: work no job-tick causes), or why there is none.
 */
export type InstructionCell =
  { readonly phase: PhaseResult; readonly idleInstructionsPerSecond: number } | { readonly unavailable: string };

/** Redis instructions per job-tick of the cell's phase, the idle server's work left out. */
export function instructionsPerJobTick(cell: {
  readonly phase: PhaseResult;
  readonly idleInstructionsPerSecond: number;
}): number {
  const { phase } = cell;
  return (phase.store.instructions! - cell.idleInstructionsPerSecond * phase.seconds) / (phase.jobs * phase.seconds);
}

const count = (value: number) => Math.round(value).toLocaleString('en-US');
const fixed = (value: number | undefined, digits: number) =>
  value === undefined || Number.isNaN(value) ? '—' : value.toFixed(digits);
const percent = (part: number, whole: number) => `${((100 * part) / whole).toFixed(2)} %`;
/** Skipped attempts by reason, as `locked 3,900, provider-error 12`, or `none`. */
const skipsText = (skips: Readonly<Record<string, number>>) =>
  Object.entries(skips)
    .map(([reason, n]) => `${reason} ${count(n)}`)
    .join(', ') || 'no skip';
const signed = (value: number, digits: number) => `${value >= 0 ? '+' : ''}${value.toFixed(digits)}`;

function countsCells(phase: PhaseResult): [string, string, string] {
  const { expected, once, twiceOrMore, never } = phase.counts;
  return [`${count(once)} of ${count(expected)}`, count(twiceOrMore), count(never)];
}

/** The main table: the same setup unlocked (baseline) and locked, and what the lock adds. */
export function mainTable(
  unlocked: PhaseResult,
  locked: PhaseResult,
  instructions: InstructionCell,
  store = 'Redis',
): string {
  const lockCalls = store === 'Redis' ? 'script calls' : 'lock statements';
  const commands = store === 'Redis' ? 'commands' : 'statements';
  const u = phaseMetrics(unlocked);
  const l = phaseMetrics(locked);
  const [uOnce, uTwice, uNever] = countsCells(unlocked);
  const [lOnce, lTwice, lNever] = countsCells(locked);
  const difference = (read: (m: PhaseMetrics) => number, digits: number) => signed(read(l) - read(u), digits);
  const instructionRow =
    'phase' in instructions
      ? [
          `Redis instructions / job-tick (callgrind, ${instructions.phase.nodes} × ${count(instructions.phase.jobs)} jobs, ${instructions.phase.seconds} s)`,
          '0 (no Redis)',
          count(instructionsPerJobTick(instructions)),
          `idle server's ${count(instructions.idleInstructionsPerSecond)} / s left out`,
        ]
      : ['Redis instructions / job-tick', '0 (no Redis)', `not measured: ${instructions.unavailable}`, ''];
  const rows: string[][] = [
    ['occurrences run exactly once (unlocked: on each node)', uOnce, lOnce, ''],
    ['occurrences run twice or more', uTwice, lTwice, ''],
    ['occurrences never run', uNever, lNever, ''],
    ['tick-to-handler delay p50 (ms)', String(u.delayP50), String(l.delayP50), difference((m) => m.delayP50, 0)],
    ['tick-to-handler delay p99 (ms)', String(u.delayP99), String(l.delayP99), difference((m) => m.delayP99, 0)],
    ['tick-to-handler delay max (ms)', String(u.delayMax), String(l.delayMax), difference((m) => m.delayMax, 0)],
    ['runs that claimed the next occurrence, early', '—', count(locked.earlyClaims), ''],
    [
      'attempts skipped as store errors',
      '—',
      count(locked.skips['provider-error'] ?? 0),
      `${percent(locked.skips['provider-error'] ?? 0, locked.counts.expected * locked.nodes)} of ${count(locked.counts.expected * locked.nodes)} attempts; ${skipsText(locked.skips)}`,
    ],
    [`${store} round trips / node / s`, fixed(u.roundTripsPerNodeSecond, 1), fixed(l.roundTripsPerNodeSecond, 1), ''],
    [
      `… of which ${lockCalls}: claims, releases, renewals`,
      '0',
      fixed(l.scriptCallsPerNodeSecond, 1),
      `the rest is presence: ${fixed(l.roundTripsPerNodeSecond - l.scriptCallsPerNodeSecond, 1)}`,
    ],
    [
      `${store} ${commands} sent / node / s`,
      fixed(u.commandsSentPerNodeSecond, 1),
      fixed(l.commandsSentPerNodeSecond, 1),
      '',
    ],
    [
      store === 'Redis'
        ? "Redis commands executed / job-tick (scripts' included)"
        : `${store} ${commands} executed / job-tick`,
      fixed(u.storeCommandsPerJobTick, 2),
      fixed(l.storeCommandsPerJobTick, 2),
      '',
    ],
    [
      `${store} CPU ms / s`,
      fixed(u.storeCpuMsPerSecond, 1),
      fixed(l.storeCpuMsPerSecond, 1),
      difference((m) => m.storeCpuMsPerSecond!, 1),
    ],
    [
      `${store} CPU µs / job-tick`,
      fixed(u.storeCpuMicrosPerJobTick, 2),
      fixed(l.storeCpuMicrosPerJobTick, 2),
      difference((m) => m.storeCpuMicrosPerJobTick!, 2),
    ],
    instructionRow,
    [
      'node CPU ms / node / s',
      fixed(u.nodeCpuMsPerNodeSecond, 1),
      fixed(l.nodeCpuMsPerNodeSecond, 1),
      difference((m) => m.nodeCpuMsPerNodeSecond, 1),
    ],
    ['RSS per node after the run (MB, median)', fixed(u.rssMb, 1), fixed(l.rssMb, 1), difference((m) => m.rssMb, 1)],
    [
      'RSS growth from the empty app, per 1,000 jobs (MB, median over nodes)',
      fixed(u.rssPer1000JobsMb, 2),
      fixed(l.rssPer1000JobsMb, 2),
      `× ${fixed(l.rssPer1000JobsMb / u.rssPer1000JobsMb, 2)}`,
    ],
    [
      'heap growth from the empty app, per 1,000 jobs (MB, median)',
      fixed(u.heapPer1000JobsMb, 2),
      fixed(l.heapPer1000JobsMb, 2),
      `× ${fixed(l.heapPer1000JobsMb / u.heapPer1000JobsMb, 2)}`,
    ],
    [
      'ticks cron ran late, at once (timer already due; whole phases)',
      count(unlocked.lateTicks),
      count(locked.lateTicks),
      '',
    ],
    [
      'machine CPU busy over the windows (%, all processes)',
      fixed(unlocked.machineBusyPercent, 0),
      fixed(locked.machineBusyPercent, 0),
      '',
    ],
  ];
  return markdownTable(['metric', 'unlocked (baseline)', 'locked', 'locked − unlocked'], rows);
}

/** The targets, each with its figure and MET / MISSED. */
export function targetLines(
  unlocked: PhaseResult,
  locked: PhaseResult,
  instructions: InstructionCell,
  cores: number,
  store = 'Redis',
): string[] {
  const u = phaseMetrics(unlocked);
  const l = phaseMetrics(locked);
  const verdict = (met: boolean) => (met ? 'MET' : 'MISSED');
  const setup = `${locked.nodes} × ${count(locked.jobs)} jobs`;
  const addedP99 = l.delayP99 - u.delayP99;
  // Node CPU per job-tick on one node: a node runs the ticks of every due job before it reads a reply.
  const tickCpuMicros = (m: PhaseMetrics) => (m.nodeCpuMsPerNodeSecond * 1_000) / locked.jobs;
  const burstMs = ((tickCpuMicros(l) - tickCpuMicros(u)) * locked.jobs) / 1_000;
  const lines = [
    `- 0 duplicates and 0 missed occurrences (${setup}): ${count(locked.counts.twiceOrMore)} / ${count(locked.counts.never)}: ${verdict(!locked.counts.twiceOrMore && !locked.counts.never)}`,
    `- p99 delay added by locking ≤ 5 ms: ${signed(addedP99, 0)} ms (${u.delayP99} → ${l.delayP99}): ${verdict(addedP99 <= 5)}` +
      (addedP99 > 5
        ? `; what bounds it: Node runs every due timer before it reads a reply, so a locked handler waits for its node's whole burst of ticks, ` +
          `${fixed(tickCpuMicros(l), 0)} µs of node CPU per job-tick locked against ${fixed(tickCpuMicros(u), 0)} unlocked: ` +
          `${fixed(burstMs, 0)} ms more CPU per burst of ${count(locked.jobs)} jobs on each node, on ${cores} cores shared by ${locked.nodes} nodes, ${store} and other work ` +
          `(machine ${locked.machineBusyPercent.toFixed(0)} % busy)`
        : ''),
    `- ${store} round trips / node / s ≤ 2 for ${count(locked.jobs)} jobs due in the same second (claims + releases): ` +
      `${fixed(l.scriptCallsPerNodeSecond, 1)}: ${verdict(l.scriptCallsPerNodeSecond <= 2)}; with the node's presence ` +
      `(heartbeat, trigger poll): ${fixed(l.roundTripsPerNodeSecond, 1)}`,
    `- ${store} CPU per job-tick (${setup}): ${fixed(l.storeCpuMicrosPerJobTick! - u.storeCpuMicrosPerJobTick!, 2)} µs over the idle server` +
      (l.storeCommandsPerJobTick === undefined
        ? ''
        : `, ${fixed(l.storeCommandsPerJobTick, 2)} ${store === 'Redis' ? 'commands' : 'statements'} executed`) +
      ('phase' in instructions
        ? `, ${count(instructionsPerJobTick(instructions))} instructions (${instructions.phase.nodes} × ${count(instructions.phase.jobs)} jobs)`
        : '') +
      ': no verdict in one run; compare with a run of the code before the change',
    `- RSS per 1,000 locked jobs ≤ 2× unlocked: ${fixed(l.rssPer1000JobsMb, 2)} MB vs ${fixed(u.rssPer1000JobsMb, 2)} MB (× ${fixed(l.rssPer1000JobsMb / u.rssPer1000JobsMb, 2)}): ${verdict(l.rssPer1000JobsMb <= 2 * u.rssPer1000JobsMb)}`,
  ];
  const reasons = uncleanReasons(locked, unlocked);
  if (reasons.length) lines.push(`- not a clean run: ${reasons.join('; ')}`);
  const caveats = saturationCaveats([unlocked, locked], cores);
  if (caveats.length) lines.push(`- saturated: ${caveats.join('; ')}`);
  return lines;
}

/** One cell of the growth table: both modes of one setup, or why it could not run. */
export type GrowthCell =
  | {
      readonly label: string;
      readonly nodes: number;
      readonly jobs: number;
      readonly unlocked: PhaseResult;
      readonly locked: PhaseResult;
    }
  | { readonly label: string; readonly nodes: number; readonly jobs: number; readonly failure: string };

export function growthTable(cells: readonly GrowthCell[], cores: number, store = 'Redis'): string {
  // Why a cell is not clean takes a paragraph: the table points to a note below it.
  const notes: string[] = [];
  const note = (text: string) => {
    notes.push(`${notes.length + 1}. ${text}`);
    return `note ${notes.length}`;
  };
  const rows = cells.map((cell) => {
    const setup = [cell.label, String(cell.nodes), count(cell.jobs)];
    if ('failure' in cell)
      return [
        ...setup,
        ...Array<string>(10).fill('—'),
        note(`${cell.nodes} × ${count(cell.jobs)}: could not run: ${cell.failure}`),
      ];
    const u = phaseMetrics(cell.unlocked);
    const l = phaseMetrics(cell.locked);
    const [, twice, never] = countsCells(cell.locked);
    const reasons = uncleanReasons(cell.locked, cell.unlocked);
    const caveats = saturationCaveats([cell.unlocked, cell.locked], cores);
    const details = `${cell.nodes} × ${count(cell.jobs)}: ${[...reasons, ...caveats].join('; ')}${lateTicksNote(cell.unlocked, cell.locked)}`;
    return [
      ...setup,
      `${twice} / ${never}`,
      `${u.delayP99} → ${l.delayP99} (${signed(l.delayP99 - u.delayP99, 0)})`,
      `${u.delayMax} → ${l.delayMax}`,
      fixed(l.roundTripsPerNodeSecond, 1),
      fixed(l.storeCpuMsPerSecond! - u.storeCpuMsPerSecond!, 1),
      fixed(l.storeCpuMicrosPerJobTick! - u.storeCpuMicrosPerJobTick!, 2),
      `${fixed(u.nodeCpuMsPerNodeSecond, 1)} → ${fixed(l.nodeCpuMsPerNodeSecond, 1)}`,
      `${fixed(u.rssMb, 0)} → ${fixed(l.rssMb, 0)}`,
      `${fixed(cell.unlocked.machineBusyPercent, 0)} / ${fixed(cell.locked.machineBusyPercent, 0)}`,
      String(cell.locked.seconds),
      reasons.length ? `not clean, ${note(details)}` : caveats.length ? `clean, saturated: ${note(details)}` : 'clean',
    ];
  });
  const headers = [
    'grows with',
    'nodes',
    'jobs / node',
    'locked: twice+ / never',
    'delay p99 ms, unlocked → locked',
    'delay max ms',
    'round trips / node / s',
    `${store} CPU ms / s, locked − unlocked`,
    `${store} CPU µs / job-tick, locked − unlocked`,
    'node CPU ms / node / s, unlocked → locked',
    'RSS MB / node, unlocked → locked',
    'machine busy %, unlocked / locked',
    'window s',
    'note',
  ];
  const sections = [[markdownTable(headers, rows)], notes, memorySlopeLines(cells)].filter((lines) => lines.length);
  return sections.map((lines) => lines.join('\n')).join('\n\n');
}

function lateTicksNote(unlocked: PhaseResult, locked: PhaseResult): string {
  if (!unlocked.lateTicks && !locked.lateTicks) return '';
  return `; cron ran ${count(unlocked.lateTicks)} / ${count(locked.lateTicks)} ticks late at once (unlocked / locked)`;
}

/**
 * Memory per 1,000 jobs from the slope between the fewest and the most jobs on the same number of nodes:
 * what each further job costs, without the fixed cost of an app that runs anything.
 */
function memorySlopeLines(cells: readonly GrowthCell[]): string[] {
  const lines: string[] = [];
  const measured = cells.filter((cell) => cell.label === 'jobs' && !('failure' in cell)) as Extract<
    GrowthCell,
    { locked: PhaseResult }
  >[];
  for (const nodes of new Set(measured.map((cell) => cell.nodes))) {
    const sameNodes = measured.filter((cell) => cell.nodes === nodes).sort((a, b) => a.jobs - b.jobs);
    if (sameNodes.length < 2) continue;
    const [fewest, most] = [sameNodes[0], sameNodes[sameNodes.length - 1]];
    const slope = (mode: 'unlocked' | 'locked', read: (m: PhaseMetrics) => number) =>
      ((read(phaseMetrics(most[mode])) - read(phaseMetrics(fewest[mode]))) * 1_000) / (most.jobs - fewest.jobs);
    const describe = (what: string, read: (m: PhaseMetrics) => number) => {
      const [u, l] = [slope('unlocked', read), slope('locked', read)];
      return `${what} unlocked ${fixed(u, 2)} MB, locked ${fixed(l, 2)} MB (× ${fixed(l / u, 2)})`;
    };
    lines.push(
      `- per 1,000 jobs, slope from ${count(fewest.jobs)} to ${count(most.jobs)} jobs on ${nodes} node(s), medians over the nodes: ` +
        `${describe('RSS', (m) => m.rssMb)}; ${describe('heap used', (m) => m.heapUsedMb)}`,
    );
  }
  return lines;
}
