import type { ChaosFindings, Duplicate, Guarantee, Miss, Overlap, Run } from './analysis.js';
import { CHAOS_ELECTION, type AppLine } from './journal.js';
import { HANDOVER_LIMIT_MS, type Handover, type LeaderTerm } from './leader-terms.js';

/** Each guarantee's row in the table. */
const GUARANTEE_ROWS: Record<Guarantee, string> = {
  duplicates: 'duplicate occurrences',
  overlaps: 'overlapping runs of one lock',
  unlocked: 'runs of a locked job without their lock',
  fencing: 'fencing-order violations',
  unhandled: 'unhandled rejections / uncaught exceptions',
  'unexpected-exits': 'unexpected exits',
  'quiet-misses': 'quiet-period misses',
  'quiet-errors': 'errors outside fault windows (+ margin)',
  'skew-failures': 'app starts whose clock skew was not applied',
  'held-unused': 'locks held unused past a store pause + one renewal interval',
  'two-leaders': 'terms begun while another node led',
  'leader-fencing': "terms whose fencing token is not above every earlier term's",
  'slow-handovers': `handovers after a leader's kill slower than lease + one renewal interval (${HANDOVER_LIMIT_MS} ms)`,
};

/** How many examples of each violation the report lists under the table. */
const EXAMPLES = 5;

/**
 * The soak's findings as a markdown table (one row per count; `ok` / `VIOLATION` on the rows that are
 * guarantees), the examples behind every violation, and the final line.
 */
export function renderFindings(findings: ChaosFindings): string {
  return [renderTable(findings), ...renderExamples(findings), finalLine(findings)].join('\n');
}

/** `chaos: PASS store=… seed=… minutes=… runs=… duplicates=0 …`, or `chaos: FAIL …`. */
export function finalLine(findings: ChaosFindings): string {
  const verdict = findings.violations === 0 ? 'PASS' : 'FAIL';
  const fields = {
    store: findings.soak.store ?? 'redis',
    seed: findings.soak.seed,
    ...duration(findings.soak.seconds),
    apps: findings.soak.apps.length,
    runs: findings.runs.length,
    terms: findings.terms.length,
    handovers: findings.handovers.length,
    ...findings.violationsPerGuarantee,
    faults: Object.values(findings.faultsPerKind).reduce((sum, n) => sum + n, 0),
  };
  return `chaos: ${verdict} ${Object.entries(fields)
    .map(([key, value]) => `${key}=${value}`)
    .join(' ')}`;
}

function renderTable(findings: ChaosFindings): string {
  const rows: Array<[string, string, string]> = [];
  const info = (what: string, value: string | number) => rows.push([what, String(value), '']);
  const check = (guarantee: Guarantee, detail = '') => {
    const count = findings.violationsPerGuarantee[guarantee];
    rows.push([GUARANTEE_ROWS[guarantee] + detail, String(count), count === 0 ? 'ok' : 'VIOLATION']);
  };

  for (const [job, count] of Object.entries(findings.runsPerJob)) info(`runs of \`${job}\``, count);
  info("runs stopped by their lock's signal (lock lost)", findings.abortedRuns);
  info('runs cut short by kill -9', findings.killedRuns);
  info('re-runs of an occurrence whose run did not finish (attempt ≥ 2)', findings.recoveries.length);
  check('duplicates');
  check('overlaps');
  check('unlocked');
  check('fencing');
  check('unhandled');
  check('unexpected-exits');
  info('seconds of the 1 s cron checked', findings.checkedSeconds);
  info('missed in a fault window (+ margin)', findings.missesInFaults);
  info("missed while an app's event loop lagged > 500 ms (load)", findings.missesUnderLoad.length);
  check('quiet-misses');
  info("errors while the app's event loop lagged > 1 s (load)", findings.errorsUnderLoad.length);
  check('quiet-errors');
  // Each app's first start shows what libfaketime gave it; every start is checked.
  const firstStart = new Map<string, number>();
  for (const c of findings.skewChecks) if (!firstStart.has(c.node)) firstStart.set(c.node, c.measuredMs);
  const skews = [...firstStart].sort(([a], [b]) => a.localeCompare(b)).map(([node, ms]) => `${node} ${signed(ms)}`);
  check('skew-failures', ` (measured: ${skews.join(', ')} ms)`);
  check('held-unused');
  info(
    `terms of the election \`${CHAOS_ELECTION.name}\` (${CHAOS_ELECTION.leaseMs / 1000} s lease)`,
    findings.terms.length,
  );
  check('two-leaders');
  check('leader-fencing');
  const slowest = Math.max(0, ...findings.handovers.map((handover) => handover.handoverMs));
  info("handovers after a leader's kill, and the slowest (ms)", `${findings.handovers.length}, ${Math.round(slowest)}`);
  info("slow handovers while a follower's event loop lagged as long (load)", findings.slowHandoversUnderLoad.length);
  check('slow-handovers');
  for (const [kind, count] of Object.entries(findings.faultsPerKind)) info(`faults: ${kind}`, count);
  if (findings.cpu)
    info('machine CPU busy, average / max', `${findings.cpu.averagePercent}% / ${findings.cpu.maxPercent}%`);

  const header = ['| what | count | |', '|---|---:|---|'];
  return [...header, ...rows.map((row) => `| ${row.join(' | ')} |`)].join('\n');
}

function renderExamples(findings: ChaosFindings): string[] {
  const at = (mono: number) => `t+${((mono - findings.soak.mono) / 1000).toFixed(1)}s`;
  const run = (r: Run) =>
    `${r.run} (${r.node}, ${at(r.start)}–${at(r.end)}, ${r.outcome}, token ${r.fencingToken ?? '-'})`;
  const term = (t: LeaderTerm) =>
    `${t.node} pid ${t.pid} (${at(t.start)}–${at(t.end)}, ${t.endedBy}, token ${t.fencingToken ?? '-'})`;
  const handover = (h: Handover) =>
    `${term(h.killed)} killed; ${h.next ? `next: ${term(h.next)}` : 'no term before the end'} after ` +
    `${Math.round(h.handoverMs)} ms; max event-loop delay ${h.maxLoopDelayMs} ms`;
  const sections: Array<[string, string[]]> = [
    [
      'Duplicate occurrences',
      findings.duplicates.map(
        (d: Duplicate) => `${d.job} ${iso(d.occurrence)}: ${d.why}; runs: ${d.runs.map(run).join('; ')}`,
      ),
    ],
    [
      'Overlaps',
      findings.overlaps.map(
        (o: Overlap) => `${o.lock}: ${run(o.first)} and ${run(o.second)} overlap ${Math.round(o.overlapMs)} ms`,
      ),
    ],
    ['Runs without their lock', findings.unlockedRuns.map(run)],
    [
      'Fencing-order violations',
      findings.fencingViolations.map((v) => `${v.lock}: ${run(v.run)} after token ${v.highestBefore}`),
    ],
    [
      'Locks held unused after a store pause',
      findings.heldUnused.map(
        (h) =>
          `${h.lock}: pause ${at(h.pause.start)}–${at(h.pause.end)}, tokens after ${h.lastTokenBefore} unused ` +
          `${(h.heldMs / 1000).toFixed(1)} s; next: ${h.next ? run(h.next) : 'none before the end'}`,
      ),
    ],
    [
      'Two leaders at once',
      findings.twoLeaders.map((t) => `${term(t.first)} and ${term(t.second)} overlap ${Math.round(t.overlapMs)} ms`),
    ],
    [
      'Terms out of fencing order',
      findings.termFencingViolations.map((v) => `${term(v.term)} after token ${v.highestBefore}`),
    ],
    ['Slow handovers', findings.slowHandovers.map(handover)],
    ['Slow handovers under load (excused)', findings.slowHandoversUnderLoad.map(handover)],
    ['Unhandled', findings.unhandled.map((u) => `${u.node} pid ${u.pid} ${at(u.mono)} ${u.kind}: ${u.error}`)],
    [
      'Unexpected exits',
      findings.unexpectedExits.map((e) => `${'node' in e ? e.node : e.store} pid ${e.pid} at ${at(e.mono)}`),
    ],
    ['Quiet-period misses', findings.quietMisses.map((m: Miss) => describeMiss(m, at))],
    ['Misses under load (excused)', findings.missesUnderLoad.map((m: Miss) => describeMiss(m, at))],
    [
      'Errors outside fault windows',
      findings.quietErrors.map((line: AppLine) => `${line.node} ${at(line.mono)} ${describeError(line)}`),
    ],
    [
      'Clock skew not applied',
      findings.skewChecks
        .filter((c) => !c.ok)
        .map(
          (c) =>
            `${c.node} pid ${c.pid}: configured ${c.configuredMs} ms, measured ${c.measuredMs} ms, ` +
            `monotonic shared: ${c.monotonicShared}`,
        ),
    ],
  ];
  return sections
    .filter(([, items]) => items.length > 0)
    .map(([title, items]) => {
      const more = items.length > EXAMPLES ? [`- … and ${items.length - EXAMPLES} more (see the run log)`] : [];
      return [``, `${title}:`, ...items.slice(0, EXAMPLES).map((item) => `- ${item}`), ...more].join('\n');
    })
    .concat(['']);
}

function describeMiss(miss: Miss, at: (mono: number) => string): string {
  const cpu = miss.cpuBusyPercent === undefined ? '' : `, CPU ${miss.cpuBusyPercent}%`;
  const due = `${at(miss.window[0])}–${at(miss.window[1])}`;
  return `${iso(miss.occurrence)} (due ${due}; max event-loop delay ${miss.maxLoopDelayMs} ms${cpu})`;
}

function describeError(line: AppLine): string {
  if (line.type === 'log') return `${line.level} [${line.context}] ${line.message}`;
  if (line.type === 'lock-event') return `${line.event} ${line.lock} ${line.reason ?? ''} ${line.error ?? ''}`.trim();
  return line.type;
}

function duration(seconds: number): Record<string, number> {
  return seconds % 60 === 0 ? { minutes: seconds / 60 } : { seconds };
}

function signed(ms: number): string {
  return ms > 0 ? `+${ms}` : String(ms);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
