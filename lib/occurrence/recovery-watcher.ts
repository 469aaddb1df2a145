/** One occurrence watched: how to try its re-run, and until when. */
interface Watch {
  readonly occurrence: number;
  /** Tries the re-run or retry; resolves to whether to try again later. */
  readonly attempt: () => Promise<boolean>;
  readonly pollEvery: number;
  /** Wall-clock ms after which the occurrence is left alone: the next one is due. */
  readonly deadline: number;
  pollAt: number;
  polling: boolean;
}

/**
 * Watches occurrences for their next attempt: for `onCrash: 'rerun'`, an occurrence another node runs, until its
 * lock is gone while its record still says running (its node died); for `retry`, an occurrence whose attempt may
 * fail, until a retry is due. One watcher takes the occurrence over and runs it again. One timer for every watch
 * of the node; a watch ends when its attempt says so, or its deadline passes.
 */
export class RecoveryWatcher {
  private readonly watches = new Map<string, Watch>();
  private timer: NodeJS.Timeout | undefined;
  private timerAt = Infinity;

  /**
   * Tries `attempt` every `pollEvery` ms until it resolves to `false`, or `deadline` passes. One watch per `key`
   * (a job's re-runs, or its retries): a newer occurrence replaces the one watched.
   */
  watch(key: string, occurrence: number, attempt: Watch['attempt'], pollEvery: number, deadline: number): void {
    if (this.watches.get(key)?.occurrence === occurrence) return;
    this.watches.set(key, { occurrence, attempt, pollEvery, deadline, pollAt: Date.now() + pollEvery, polling: false });
    this.arm();
  }

  /** Ends every watch (the app is shutting down). */
  stop(): void {
    clearTimeout(this.timer);
    this.watches.clear();
  }

  private arm(): void {
    let next = Infinity;
    for (const watch of this.watches.values()) if (!watch.polling) next = Math.min(next, watch.pollAt);
    if (next >= this.timerAt) return;
    clearTimeout(this.timer);
    this.timerAt = next;
    if (next === Infinity) return;
    this.timer = setTimeout(() => this.poll(), Math.max(0, next - Date.now()));
    this.timer.unref();
  }

  private poll(): void {
    this.timerAt = Infinity;
    const now = Date.now();
    for (const [key, watch] of this.watches) {
      if (watch.polling || watch.pollAt > now) continue;
      if (now >= watch.deadline) {
        this.watches.delete(key);
        continue;
      }
      watch.polling = true;
      void watch.attempt().then((lookAgain) => {
        watch.polling = false;
        if (lookAgain) watch.pollAt = Date.now() + watch.pollEvery;
        else if (this.watches.get(key) === watch) this.watches.delete(key);
        this.arm();
      });
    }
    this.arm();
  }
}
