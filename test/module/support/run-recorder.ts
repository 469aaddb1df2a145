import type { Redis } from 'ioredis';
import { currentLock } from '../../../lib/index.js';

/** What a job saw during one of its runs. */
export interface JobRun {
  readonly job: string;
  /** The lock the run was under (`currentLock()`), if any. */
  readonly lockName: string | undefined;
  /** The lock keys under the test's prefix that existed at that moment (fencing counters and job records left out). */
  readonly heldLockKeys: ReadonlySet<string>;
}

/** The Redis key of lock `name` under `keyPrefix`, as `RedisLockProvider` names it. */
export function lockKey(keyPrefix: string, name: string): string {
  return `${keyPrefix}:{${name}}`;
}

/**
 * Injected into test jobs, which call {@link record} from their handler: it notes the lock the run is
 * under and which lock keys exist in Redis while it runs, so a test can tell a locked run from an
 * unlocked one from the inside. Only key names are read, never values, which are the provider's own.
 */
export class RunRecorder {
  readonly runs: JobRun[] = [];

  constructor(
    private readonly redis: Redis | undefined,
    private readonly keyPrefix: string,
  ) {}

  async record(job: string): Promise<void> {
    const lockName = currentLock()?.name;
    const heldLockKeys = this.redis ? await this.readLockKeys(this.redis) : new Set<string>();
    this.runs.push({ job, lockName, heldLockKeys });
  }

  runsOf(job: string): JobRun[] {
    return this.runs.filter((run) => run.job === job);
  }

  private async readLockKeys(redis: Redis): Promise<Set<string>> {
    const keys = new Set<string>();
    for await (const batch of redis.scanStream({ match: `${this.keyPrefix}:*`, count: 1000 })) {
      for (const key of batch as string[]) if (key.endsWith('}')) keys.add(key);
    }
    return keys;
  }
}
