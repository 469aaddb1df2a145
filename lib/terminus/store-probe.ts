import { formatDuration } from '../core/provider/duration.js';
import { LockProviderUnavailableError } from '../core/provider/errors.js';
import type { JobRecord, LockProvider } from '../core/provider/lock-provider.js';
import { canReadJobRecords } from '../core/provider/provider-abilities.js';

/** Whether the lock store answered a health check's reads, and what it said of each lock. */
export type StoreProbe =
  | { readonly status: 'up'; readonly responseTimeMs: number; readonly records: ReadonlyMap<string, JobRecord> }
  | { readonly status: 'down'; readonly reason: string }
  /** The provider has no `readJobRecord()`: there is nothing to ask it without taking a lock. */
  | { readonly status: 'not-checked' };

/**
 * Reads the job record of each of `lockNames` (one read when there are none, of `fallbackName`'s), all at
 * once: on a Redis Cluster each lock's keys live on their own master, so every master that serves a job is
 * asked. Down when any read fails or they have not all answered within `timeoutMs`. The reason never holds
 * what the store replied beyond the failure's kind, so it can be shown on a public endpoint.
 */
export async function probeStore(
  provider: LockProvider,
  lockNames: readonly string[],
  fallbackName: string,
  timeoutMs: number,
): Promise<StoreProbe> {
  if (!canReadJobRecords(provider)) return { status: 'not-checked' };
  const names = lockNames.length > 0 ? lockNames : [fallbackName];
  const startedAt = performance.now();
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<'expired'>((resolve) => (timer = setTimeout(() => resolve('expired'), timeoutMs)));
  const reads = Promise.all(names.map((name) => provider.readJobRecord(name)));
  reads.catch(() => undefined); // a read that fails after the timeout has nobody left to tell
  try {
    const answer = await Promise.race([reads, expired]);
    if (answer === 'expired') return { status: 'down', reason: `no answer within ${formatDuration(timeoutMs)}` };
    const records = new Map<string, JobRecord>();
    answer.forEach((record, i) => record && records.set(names[i], record));
    return { status: 'up', responseTimeMs: Math.round(performance.now() - startedAt), records };
  } catch (error) {
    return { status: 'down', reason: failureKind(error) };
  } finally {
    clearTimeout(timer);
  }
}

/** `connection refused (ECONNREFUSED)` for a store failure the library described; else the error's class. */
function failureKind(error: unknown): string {
  if (error instanceof LockProviderUnavailableError) return error.reason;
  return error instanceof Error ? error.name : 'failed';
}
