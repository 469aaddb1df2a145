import type { RunReport } from '../core/provider/lock-provider.js';

/*
 * The operator records (cluster-records.ts) as stores keep them: JSON, whose times are epoch ms. The Lua
 * scripts and SQL statements compare and write those numbers; the package's API reads `Date`s.
 */

/** The fields of the records that hold a point in time. */
const TIME_FIELDS = new Set(['at', 'startedAt', 'finishedAt', 'lastSeen', 'occurrence', 'foundAt']);

/** `record` as stored JSON: its `Date`s as epoch ms. */
export function storedJson(record: object): string {
  return JSON.stringify(record, function (this: Record<string, unknown>, key, value: unknown) {
    const raw = this[key];
    return raw instanceof Date ? raw.getTime() : value;
  });
}

/** A record from its stored JSON text. */
export function parseStored<T>(json: string): T {
  return revived(JSON.parse(json) as object) as T;
}

/** A record from its stored JSON, parsed already (PostgreSQL's `jsonb`): its epoch-ms times as `Date`s. */
export function revived<T extends object>(stored: T): T {
  const fields = Object.entries(stored).map(([key, value]: [string, unknown]) => [
    key,
    TIME_FIELDS.has(key) && typeof value === 'number' ? new Date(value) : value,
  ]);
  return Object.fromEntries(fields) as T;
}

/** The history entry of a run `report`ed at its release, less its outcome: what every store records. */
export function runEntry(report: RunReport, node: string, fencingToken: number | undefined) {
  const { startedAt, durationMs } = report;
  return {
    type: 'run',
    occurrence: report.occurrence ?? null,
    node,
    startedAt,
    finishedAt: new Date(startedAt.getTime() + durationMs),
    durationMs,
    error: report.error ?? null,
    fencingToken: fencingToken ?? null,
    attempt: report.attempt,
    manual: report.manual ?? null,
  } as const;
}
