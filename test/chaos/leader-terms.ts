import { CHAOS_ELECTION, type RunLogLine } from './journal.js';

type Line<T extends RunLogLine['type']> = Extract<RunLogLine, { type: T }>;

/**
 * The leader workload's verdict: each app's terms as the leader of {@link CHAOS_ELECTION}, from its journal,
 * on the machine's monotonic clock. Pure functions, as the rest of the analysis.
 */

/** A dead leader's successor is due within the lease plus one renewal interval (a third of the lease). */
export const HANDOVER_LIMIT_MS = CHAOS_ELECTION.leaseMs + CHAOS_ELECTION.leaseMs / 3;

/** One term of one app process, from its `lead-start` to its `lead-end`, else its process's end. */
export interface LeaderTerm {
  readonly node: string;
  readonly pid: number;
  readonly start: number;
  readonly end: number;
  readonly fencingToken: number | null;
  /** The `lead-end` reason; `killed` or `died` with its process; `unfinished` at the soak's end. */
  readonly endedBy: string;
}

/** A term that began while an earlier one had not ended. */
export interface TwoLeaders {
  readonly first: LeaderTerm;
  readonly second: LeaderTerm;
  readonly overlapMs: number;
}

/** A term whose fencing token is missing, or not above every earlier term's. */
export interface TermFencingViolation {
  readonly term: LeaderTerm;
  readonly highestBefore: number;
}

/** What followed the kill of a leader: the next term, and how long after the kill it began. */
export interface Handover {
  readonly killed: LeaderTerm;
  /** `undefined`: no term began before the soak's end. */
  readonly next: LeaderTerm | undefined;
  readonly handoverMs: number;
  /** The longest event-loop delay another app reported meanwhile: a follower's timer ran that late. */
  readonly maxLoopDelayMs: number;
}

/** The handovers after a leader's kill, split by whether they kept to {@link HANDOVER_LIMIT_MS}. */
export interface Handovers {
  readonly handovers: readonly Handover[];
  /** Late by less than a follower's event loop lagged meanwhile: load, not the election. */
  readonly slowHandoversUnderLoad: readonly Handover[];
  readonly slowHandovers: readonly Handover[];
}

/** Every term, in order of start. */
export function assembleTerms(lines: readonly RunLogLine[], soakEnd: number): LeaderTerm[] {
  const exits = new Map<number, Line<'app-exit'>>();
  for (const line of lines) if (line.type === 'app-exit') exits.set(line.pid, line);
  const terms: LeaderTerm[] = [];
  for (const [index, start] of lines.entries()) {
    if (start.type !== 'lead-start') continue;
    const ended = lines
      .slice(index + 1)
      .find((line): line is Line<'lead-end'> => line.type === 'lead-end' && line.pid === start.pid);
    const exit = exits.get(start.pid);
    const { node, pid, mono, fencingToken } = start;
    const endedBy = ended?.reason ?? (exit ? (exit.expected ? 'killed' : 'died') : 'unfinished');
    terms.push({ node, pid, start: mono, end: ended?.mono ?? exit?.mono ?? soakEnd, fencingToken, endedBy });
  }
  return terms.sort((a, b) => a.start - b.start);
}

/** Terms that overlap on the monotonic clock, each paired with the earlier term it overlaps. */
export function findTwoLeaders(terms: readonly LeaderTerm[]): TwoLeaders[] {
  const found: TwoLeaders[] = [];
  let longest: LeaderTerm | undefined; // the earlier term that ends last
  for (const term of terms) {
    if (longest && term.start < longest.end) {
      found.push({ first: longest, second: term, overlapMs: Math.min(longest.end, term.end) - term.start });
    }
    if (!longest || term.end > longest.end) longest = term;
  }
  return found;
}

/** In order of start, every term's fencing token must be above all earlier ones; both stores give one. */
export function findTermFencingViolations(terms: readonly LeaderTerm[]): TermFencingViolation[] {
  const found: TermFencingViolation[] = [];
  let highest = -Infinity;
  for (const term of terms) {
    if (term.fencingToken === null || term.fencingToken <= highest) found.push({ term, highestBefore: highest });
    highest = Math.max(highest, term.fencingToken ?? -Infinity);
  }
  return found;
}

/**
 * After each kill of a leader, the next term must begin within {@link HANDOVER_LIMIT_MS}: the store frees its
 * lease at most a lease after its last renewal, and each follower tries at least once per renewal interval. A
 * kill too close to the soak's end to judge is left out.
 */
export function findHandovers(lines: readonly RunLogLine[], terms: readonly LeaderTerm[], soakEnd: number): Handovers {
  const delays = lines.filter((line): line is Line<'loop-delay'> => line.type === 'loop-delay');
  const handovers: Handover[] = [];
  for (const killed of terms.filter((term) => term.endedBy === 'killed')) {
    const next = terms.find((term) => term.start >= killed.end);
    const handoverMs = (next?.start ?? soakEnd) - killed.end;
    if (!next && handoverMs <= HANDOVER_LIMIT_MS) continue;
    // A delay line covers the second before it.
    const during = delays.filter(
      (line) => line.pid !== killed.pid && line.mono >= killed.end && line.mono - 1_000 <= killed.end + handoverMs,
    );
    handovers.push({ killed, next, handoverMs, maxLoopDelayMs: Math.max(0, ...during.map((line) => line.maxMs)) });
  }
  const slow = handovers.filter((handover) => handover.handoverMs > HANDOVER_LIMIT_MS);
  const underLoad = (handover: Handover) =>
    handover.next !== undefined && handover.maxLoopDelayMs >= handover.handoverMs - HANDOVER_LIMIT_MS;
  return {
    handovers,
    slowHandoversUnderLoad: slow.filter(underLoad),
    slowHandovers: slow.filter((handover) => !underLoad(handover)),
  };
}
