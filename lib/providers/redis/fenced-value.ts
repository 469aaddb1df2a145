/**
 * A plain lock's value in Redis: `fenced:<s>:<µs>:<owner value>`, its fencing token (the server's clock when
 * `acquire.lua` took it, in seconds and microseconds, as `TIME` gives them) before its owner value
 * (`owner-value.ts`). Operators read the token there; a job's lock keeps its token in its fence key instead.
 */
const FENCED_VALUE = /^fenced:(\d+):(\d+):(.*)$/s;

/** What a lock's value holds: its owner value, and the token when the value carries one (a plain lock's). */
export interface LockValue {
  readonly owner: string;
  readonly fencingToken: number | undefined;
}

/** The value `acquire.lua` wrote for `owner` with `fencingToken`: what the lock's release and renewal compare. */
export function fencedValue(fencingToken: number, owner: string): string {
  const seconds = Math.floor(fencingToken / 1_000_000);
  return `fenced:${seconds}:${fencingToken - seconds * 1_000_000}:${owner}`;
}

/**
 * A lock's `value` taken apart: see {@link fencedValue}. A value without a token (a job's lock) is all owner value:
 * its token is its fence key's.
 */
export function readLockValue(value: string): LockValue {
  const parts = FENCED_VALUE.exec(value);
  if (!parts) return { owner: value, fencingToken: undefined };
  return { owner: parts[3], fencingToken: Number(parts[1]) * 1_000_000 + Number(parts[2]) };
}
