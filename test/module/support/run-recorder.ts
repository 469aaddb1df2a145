import { currentLock } from '../../../lib/index.js';

/** What a job saw during one of its runs. */
export interface JobRun {
  readonly job: string;
  /** The lock the run was under (`currentLock()`), if any. */
  readonly lockName: string | undefined;
  /** Whether the store held that lock (the job's own name when it ran under none) while the run went on. */
  readonly lockHeld: boolean;
}

/** Asks the store whether lock `name` is held now; read-only, so a run's own lock is not disturbed. */
export type HeldProbe = (name: string) => Promise<boolean>;

/**
 * Injected into test jobs, which call {@link record} from their handler: it notes the lock the run is
 * under and whether the store held it meanwhile, so a test can tell a locked run from an unlocked one from
 * the inside.
 */
export class RunRecorder {
  readonly runs: JobRun[] = [];

  constructor(private readonly held: HeldProbe = async () => false) {}

  async record(job: string): Promise<void> {
    const lockName = currentLock()?.name;
    this.runs.push({ job, lockName, lockHeld: await this.held(lockName ?? job) });
  }

  runsOf(job: string): JobRun[] {
    return this.runs.filter((run) => run.job === job);
  }
}
