import { analyze } from './analysis.js';
import { finalLine } from './findings-report.js';
import type { AppLine, ChaosJob, RunLogLine, RunOutcome, SoakLine } from './journal.js';

/**
 * The chaos analysis on hand-made run logs: a clean soak passes, and each kind of violation, written
 * into it, is found and fails it. Two apps without skew, so a second's due window is easy to place.
 */

const T0 = 1_000_000; // the soak's start on the monotonic clock
const WALL_AT_T0 = 1_700_000_000_000; // a whole second
const SECONDS = 30;
const PIDS: Record<string, number> = { 'app-1': 101, 'app-2': 102 };

/** `seconds` after the soak's start, on the monotonic clock. */
const at = (seconds: number) => T0 + seconds * 1000;
/** The occurrence of the 1 s cron due `seconds` after the soak's start. */
const second = (seconds: number) => WALL_AT_T0 + seconds * 1000;

interface RunSpec {
  job?: ChaosJob;
  node?: string;
  from: number;
  to?: number;
  outcome?: RunOutcome;
  occurrence?: number;
  attempt?: number;
  token?: number;
  locked?: boolean;
  released?: boolean;
}

let runCount = 0;
let tokenCount = 1_000;

/** The lines of one run: start, end (unless `to` is left out: still running, or killed), released. */
function run(spec: RunSpec): AppLine[] {
  const { job = 'tick', node = 'app-1', from, to, outcome = 'completed', locked = true } = spec;
  const pid = PIDS[node];
  const id = `${node}:${pid}:${++runCount}`;
  const token = locked ? (spec.token ?? ++tokenCount) : undefined;
  const cron = job === 'tick' || job === 'report';
  const lines: AppLine[] = [
    {
      type: 'start',
      node,
      pid,
      mono: at(from),
      run: id,
      job,
      lock: job,
      locked,
      wall: WALL_AT_T0 + from * 1000,
      fencingToken: token,
      occurrence: cron && locked ? (spec.occurrence ?? second(Math.round(from))) : undefined,
      attempt: cron && locked ? (spec.attempt ?? 1) : undefined,
    },
  ];
  if (to !== undefined) {
    lines.push({ type: 'end', node, pid, mono: at(to), run: id, job, lock: job, outcome });
    if (spec.released ?? true)
      lines.push({
        type: 'lock-event',
        node,
        pid,
        mono: at(to) + 1,
        event: 'released',
        lock: job,
        fencingToken: token,
      });
  }
  return lines;
}

/** A soak in which app-1 runs every second of the 1 s cron, and nothing goes wrong. */
function cleanSoak(): RunLogLine[] {
  const soak: SoakLine = {
    type: 'soak',
    seed: 7,
    seconds: SECONDS,
    apps: [
      { node: 'app-1', skewMs: 0 },
      { node: 'app-2', skewMs: 0 },
    ],
    wallMinusMono: WALL_AT_T0 - T0,
    missMarginMs: 7_000,
    mono: T0,
  };
  const lines: RunLogLine[] = [soak];
  for (const node of ['app-1', 'app-2']) {
    lines.push({ type: 'app-started', node, pid: PIDS[node], mono: at(-2), wallMinusMono: WALL_AT_T0 - T0 });
    lines.push({ type: 'ready', node, pid: PIDS[node], mono: at(-1), wall: WALL_AT_T0 - 1000 });
  }
  for (let s = 0; s <= SECONDS; s++) lines.push(...run({ from: s + 0.005, to: s + 0.105 }));
  lines.push({ type: 'soak-end', mono: at(SECONDS) + 600 });
  for (const node of ['app-1', 'app-2'])
    lines.push({ type: 'app-exit', node, pid: PIDS[node], mono: at(SECONDS) + 700, expected: true });
  return lines;
}

/** The clean soak without its 1 s cron run(s) of the given seconds. */
function withoutTicks(lines: RunLogLine[], ...seconds: number[]): RunLogLine[] {
  const dropped = new Set(
    lines
      .filter(
        (line) => line.type === 'start' && line.job === 'tick' && seconds.some((s) => line.occurrence === second(s)),
      )
      .map((line) => (line as { run: string }).run),
  );
  return lines.filter((line) => !('run' in line && dropped.has(line.run)));
}

/** A term of `node` as the election's leader, from `from` until `to` (left out: until its process ends). */
function term(node: string, from: number, token: number | null, to?: number, reason = 'lease-expired'): AppLine[] {
  const base = { node, pid: PIDS[node] };
  const lines: AppLine[] = [{ type: 'lead-start', ...base, mono: at(from), fencingToken: token }];
  if (to !== undefined) lines.push({ type: 'lead-end', ...base, mono: at(to), reason });
  return lines;
}

function kill(node: string, seconds: number): RunLogLine {
  return { type: 'app-exit', node, pid: PIDS[node], mono: at(seconds), expected: true };
}

beforeEach(() => {
  runCount = 0;
  tokenCount = 1_000;
});

describe('chaos analysis', () => {
  it('passes a soak in which nothing went wrong, and counts what it checked', () => {
    const findings = analyze(cleanSoak());

    expect(findings.violations).toBe(0);
    expect(findings.runsPerJob).toEqual({ tick: SECONDS + 1, report: 0, sweep: 0, ledger: 0, beacon: 0 });
    // Seconds whose due window [O - 0.5 s, O + 0.5 s] lies inside the soak: 1 … 30.
    expect(findings.checkedSeconds).toBe(SECONDS);
    expect(finalLine(findings)).toMatch(
      /^chaos: PASS store=redis seed=7 seconds=30 apps=2 runs=31 terms=0 handovers=0 duplicates=0 overlaps=0 /,
    );
  });

  it('finds an occurrence run twice as a first attempt', () => {
    const lines = [...cleanSoak(), ...run({ node: 'app-2', from: 12.2, to: 12.3, occurrence: second(12) })];

    const findings = analyze(lines);

    expect(findings.duplicates).toHaveLength(1);
    expect(findings.duplicates[0]).toMatchObject({ job: 'tick', occurrence: second(12) });
    expect(findings.duplicates[0].why).toMatch(/again as a first attempt/);
    expect(finalLine(findings)).toMatch(/^chaos: FAIL .* duplicates=1 /);
  });

  it('allows a re-run after the first run was killed mid-run, and after a lost lock', () => {
    const killed = run({ job: 'report', node: 'app-1', from: 10, occurrence: second(10) });
    const lost = run({ job: 'report', node: 'app-2', from: 20, to: 22, outcome: 'aborted', occurrence: second(20) });
    const lines = [
      ...cleanSoak().filter((line) => !(line.type === 'app-exit' && line.node === 'app-1')),
      ...killed,
      kill('app-1', 12),
      ...run({ job: 'report', node: 'app-2', from: 14, to: 18, occurrence: second(10), attempt: 2 }),
      ...lost,
      ...run({ job: 'report', node: 'app-2', from: 24, to: 28, occurrence: second(20), attempt: 2 }),
    ];

    const findings = analyze(lines);

    expect(findings.duplicates).toEqual([]);
    expect(findings.recoveries).toHaveLength(2);
    expect(findings.killedRuns).toBe(1);
  });

  it('finds a finished occurrence re-run after its release failed while its node lived on', () => {
    const finished = run({ job: 'report', node: 'app-1', from: 10, to: 14.5, occurrence: second(10), released: false });
    const lines = [
      ...cleanSoak(),
      ...finished,
      ...run({ job: 'report', node: 'app-2', from: 17, to: 21.5, occurrence: second(10), attempt: 2 }),
    ];

    const findings = analyze(lines);

    expect(findings.duplicates).toHaveLength(1);
    expect(findings.duplicates[0].why).toMatch(
      /after app-1:101:\d+ had finished it \(completed, not released, its node alive\)/,
    );
  });

  it('allows a re-run of a finished occurrence whose node was killed before its release', () => {
    const finished = run({ job: 'report', node: 'app-1', from: 10, to: 14.5, occurrence: second(10), released: false });
    const lines = [
      ...cleanSoak().filter((line) => !(line.type === 'app-exit' && line.node === 'app-1')),
      ...finished,
      kill('app-1', 14.6),
      ...run({ job: 'report', node: 'app-2', from: 18, to: 22.5, occurrence: second(10), attempt: 2 }),
    ];

    expect(analyze(lines).duplicates).toEqual([]);
  });

  it('finds overlapping runs of one lock, a killed run lasting until its kill', () => {
    const lines = [
      ...cleanSoak().filter((line) => !(line.type === 'app-exit' && line.node === 'app-1')),
      ...run({ job: 'sweep', node: 'app-1', from: 5, to: 5.2 }),
      ...run({ job: 'sweep', node: 'app-2', from: 5.1, to: 5.3 }), // overlaps the run above
      ...run({ job: 'sweep', node: 'app-1', from: 8 }), // killed at 10: runs until then
      kill('app-1', 10),
      ...run({ job: 'sweep', node: 'app-2', from: 9.5, to: 9.7 }), // overlaps the killed run
      ...run({ job: 'sweep', node: 'app-2', from: 10.5, to: 10.7 }), // after the kill: fine
    ];

    const findings = analyze(lines);

    expect(findings.overlaps.map((o) => [o.first.start - T0, o.second.start - T0])).toEqual([
      [5_000, 5_100],
      [8_000, 9_500],
    ]);
  });

  it('finds fencing tokens that do not rise in start order', () => {
    const lines = [
      ...cleanSoak(),
      ...run({ job: 'ledger', from: 3, to: 3.1, token: 50 }),
      ...run({ job: 'ledger', node: 'app-2', from: 4, to: 4.1, token: 49 }),
    ];

    const findings = analyze(lines);

    expect(findings.fencingViolations).toHaveLength(1);
    expect(findings.fencingViolations[0]).toMatchObject({ lock: 'ledger', highestBefore: 50 });
  });

  it('finds a lock held unused after a store pause for longer than the pause plus one renewal interval', () => {
    const pause: RunLogLine = { type: 'fault', kind: 'store-pause', target: 'postgres', start: at(10), end: at(13) };
    const sweeps = (...spec: [from: number, token: number][]) =>
      spec.flatMap(([from, token]) => run({ job: 'sweep', from, to: from + 0.1, token }));
    // Token 3 (a claim given up during the pause) was taken and never run; 7 s (> 3 + 1) passed before token 4.
    const held = [...cleanSoak(), pause, ...sweeps([8, 1], [9, 2], [20, 4], [21, 5])];
    // The same gap, taken again 1.5 s after the pause; and a lock that skipped no token but ran late.
    const released = [...cleanSoak(), pause, ...sweeps([8, 1], [9, 2], [14.5, 4])];
    const noGap = [...cleanSoak(), pause, ...sweeps([8, 1], [9, 2], [25, 3])];
    // A job due every 10 s: its next try, not its lock, sets when it runs again.
    const report = [...cleanSoak(), pause, ...run({ job: 'report', from: 10, to: 10.1, token: 7 })];
    report.push(...run({ job: 'report', from: 20, to: 20.1, token: 9 }));
    // A job due every 700 ms whose lock was never taken again before the soak's end.
    const never = [...cleanSoak(), pause, ...sweeps([8, 1], [9, 2])];
    // The same, but the last run's release failed before the pause: its lock runs until its lockAtMostFor.
    const unreleased = [...cleanSoak(), pause, ...sweeps([8, 1])];
    unreleased.push(...run({ job: 'sweep', from: 9, to: 9.1, token: 2, released: false }));

    const findings = analyze(held);

    expect(findings.heldUnused).toEqual([
      expect.objectContaining({ lock: 'sweep', lastTokenBefore: 2, heldMs: 7_000, next: expect.anything() }),
    ]);
    expect(findings.violationsPerGuarantee['held-unused']).toBe(1);
    expect(analyze(released).heldUnused).toEqual([]);
    expect(analyze(noGap).heldUnused).toEqual([]);
    expect(analyze(report).heldUnused).toEqual([]);
    expect(analyze(never).heldUnused).toEqual([expect.objectContaining({ lock: 'sweep', next: undefined })]);
    expect(analyze(unreleased).heldUnused).toEqual([]);
  });

  it('finds a run of a locked job without its lock', () => {
    const lines = [...cleanSoak(), ...run({ job: 'sweep', node: 'app-2', from: 0.2, to: 0.3, locked: false })];

    expect(analyze(lines).unlockedRuns).toHaveLength(1);
  });

  it('counts an unlocked run of a cron job towards the occurrence it fired for', () => {
    const lines = [...cleanSoak(), ...run({ node: 'app-2', from: 6.003, to: 6.1, locked: false })];

    const findings = analyze(lines);

    expect(findings.unlockedRuns).toHaveLength(1);
    expect(findings.duplicates.map((d) => d.occurrence)).toEqual([second(6)]);
  });

  it('finds unhandled rejections and unexpected exits, not the exits it caused', () => {
    const lines: RunLogLine[] = [
      ...cleanSoak(),
      { type: 'unhandled', node: 'app-2', pid: 102, mono: at(7), kind: 'unhandledRejection', error: 'Error: boom' },
      { type: 'app-exit', node: 'app-2', pid: 102, mono: at(8), expected: false, description: 'code 1' },
      { type: 'store-exit', store: 'redis', pid: 55, mono: at(9), expected: true },
    ];

    const findings = analyze(lines);

    expect(findings.unhandled).toHaveLength(1);
    expect(findings.unexpectedExits).toHaveLength(1);
  });

  it('finds a missed second in a quiet period, and excuses one in a fault window or under load', () => {
    const lines: RunLogLine[] = [
      ...withoutTicks(cleanSoak(), 5, 12, 20),
      // second 12 is due within 7 s (the margin) of this fault's end
      { type: 'fault', kind: 'store-pause', target: 'redis', start: at(3.5), end: at(5.2) },
      // second 20: an app's event loop stalled over half a gap
      { type: 'loop-delay', node: 'app-2', pid: 102, mono: at(20.3), maxMs: 800 },
      { type: 'cpu', mono: at(20.3), busyPercent: 100 },
    ];

    const findings = analyze(lines);

    expect(findings.missesInFaults).toBe(2);
    expect(findings.missesUnderLoad.map((m) => m.occurrence)).toEqual([second(20)]);
    expect(findings.quietMisses).toEqual([]);

    const quiet = analyze(withoutTicks(cleanSoak(), 16));
    expect(quiet.quietMisses.map((m) => m.occurrence)).toEqual([second(16)]);
    expect(quiet.violations).toBe(1);
  });

  it('finds errors outside fault windows and their margin, and tells those of a lagging app apart', () => {
    const storeError = (node: string, seconds: number): RunLogLine => ({
      type: 'lock-event',
      node,
      pid: PIDS[node],
      mono: at(seconds),
      event: 'skipped',
      lock: 'tick',
      reason: 'provider-error',
    });
    const lines: RunLogLine[] = [
      ...cleanSoak(),
      { type: 'fault', kind: 'stall', target: 'app-1', start: at(4), end: at(6) },
      storeError('app-1', 9), // within the fault's margin
      storeError('app-2', 20),
      { type: 'lock-event', node: 'app-2', pid: 102, mono: at(21), event: 'skipped', lock: 'tick', reason: 'locked' },
      { type: 'loop-delay', node: 'app-1', pid: 101, mono: at(24), maxMs: 1_400 },
      storeError('app-1', 25), // its event loop had just lagged 1.4 s
      storeError('app-2', 25),
    ];

    const findings = analyze(lines);

    expect(findings.quietErrors.map((line) => [line.node, line.mono])).toEqual([
      ['app-2', at(20)],
      ['app-2', at(25)],
    ]);
    expect(findings.errorsUnderLoad.map((line) => [line.node, line.mono])).toEqual([['app-1', at(25)]]);
  });

  it('fails a soak whose apps did not get their clock skew, or not on the shared monotonic clock', () => {
    const lines: RunLogLine[] = [
      ...cleanSoak(),
      { type: 'app-started', node: 'app-2', pid: 202, mono: at(10), wallMinusMono: WALL_AT_T0 - T0 },
      { type: 'ready', node: 'app-2', pid: 202, mono: at(11), wall: WALL_AT_T0 + 11_000 + 4_000 },
      { type: 'app-started', node: 'app-1', pid: 201, mono: at(12), wallMinusMono: WALL_AT_T0 - T0 },
      { type: 'ready', node: 'app-1', pid: 201, mono: at(12) - 4_000, wall: WALL_AT_T0 + 12_000 },
    ];

    const failed = analyze(lines).skewChecks.filter((check) => !check.ok);

    expect(failed.map(({ pid, measuredMs, monotonicShared }) => ({ pid, measuredMs, monotonicShared }))).toEqual([
      { pid: 202, measuredMs: 4_000, monotonicShared: true },
      { pid: 201, measuredMs: 4_000, monotonicShared: false },
    ]);
  });

  it('finds two leaders at once on the monotonic clock, and terms out of fencing order', () => {
    const lines = [
      ...cleanSoak(),
      ...term('app-1', 1, 1, 9),
      ...term('app-2', 9.5, 2, 15),
      ...term('app-1', 14.6, 3, 20), // began 400 ms before app-2's term ended
      ...term('app-2', 21, 3, 25), // the token of an earlier term
      ...term('app-1', 26, null, 28),
    ];

    const findings = analyze(lines);

    expect(findings.terms.map((t) => [t.node, t.start - T0, t.endedBy])).toEqual([
      ['app-1', 1_000, 'lease-expired'],
      ['app-2', 9_500, 'lease-expired'],
      ['app-1', 14_600, 'lease-expired'],
      ['app-2', 21_000, 'lease-expired'],
      ['app-1', 26_000, 'lease-expired'],
    ]);
    expect(
      findings.twoLeaders.map((t) => [t.first.fencingToken, t.second.fencingToken, Math.round(t.overlapMs)]),
    ).toEqual([[2, 3, 400]]);
    expect(findings.termFencingViolations.map((v) => [v.term.start - T0, v.highestBefore])).toEqual([
      [21_000, 3],
      [26_000, 3],
    ]);
    expect(finalLine(findings)).toMatch(/^chaos: FAIL .* terms=5 handovers=0 .* two-leaders=1 leader-fencing=2 /);
  });

  it("judges each handover after a leader's kill against the lease plus one renewal interval", () => {
    const withKills = (...kills: RunLogLine[]) => [
      ...cleanSoak().filter((line) => line.type !== 'app-exit'),
      ...kills,
      { type: 'app-exit', node: 'app-2', pid: PIDS['app-2'], mono: at(SECONDS) + 700, expected: true } as const,
    ];
    // Killed at 10 s, succeeded 3.9 s later: within 3 s + 1 s.
    const quick = withKills(...term('app-1', 1, 1), kill('app-1', 10), ...term('app-2', 13.9, 2));
    // Succeeded 4.5 s later, while app-2's event loop lagged 300 ms, then 600 ms.
    const late = (delayMs: number) =>
      withKills(...term('app-1', 1, 1), kill('app-1', 10), ...term('app-2', 14.5, 2), {
        type: 'loop-delay',
        node: 'app-2',
        pid: PIDS['app-2'],
        mono: at(13),
        maxMs: delayMs,
      });
    // No successor before the soak's end; a kill 2 s before the end is not judged.
    const never = withKills(...term('app-1', 1, 1), kill('app-1', 10));
    const tooLate = withKills(...term('app-1', 1, 1), kill('app-1', SECONDS - 2));

    expect(analyze(quick)).toMatchObject({ slowHandovers: [], slowHandoversUnderLoad: [], violations: 0 });
    expect(analyze(quick).handovers.map((h) => Math.round(h.handoverMs))).toEqual([3_900]);
    expect(analyze(late(300)).slowHandovers.map((h) => [Math.round(h.handoverMs), h.maxLoopDelayMs])).toEqual([
      [4_500, 300],
    ]);
    expect(analyze(late(600))).toMatchObject({ slowHandovers: [], slowHandoversUnderLoad: [expect.anything()] });
    expect(analyze(never).slowHandovers).toEqual([expect.objectContaining({ next: undefined })]);
    expect(finalLine(analyze(never))).toMatch(/ handovers=1 .* slow-handovers=1 /);
    expect(analyze(tooLate).handovers).toEqual([]);
  });
});
