/** One call waiting in a {@link CallBatch}: what it asks, and how to answer it. */
interface Call<Request, Reply> {
  readonly request: Request;
  readonly resolve: (reply: Reply) => void;
  readonly reject: (failure: unknown) => void;
  readonly onFailure?: (failure: unknown) => void;
}

/** Sends a batch's requests to the store in one round trip; resolves to one reply per request, in order. */
export type BatchSender<Request, Reply> = (requests: readonly Request[]) => Promise<readonly Reply[]>;

/** A turn of the event loop shorter than this held a whole burst: its batch goes at once, adding no wait. */
const QUICK_TURN_MS = 5;
/** A burst is over once this long passes without a new call. */
const QUIET_MS = 5;
/** The longest a batch waits for the rest of its burst, after the turn of its first call. */
const MAX_BURST_WAIT_MS = 100;

/**
 * Calls of one store operation that takes one or more jobs (claims, job locks, run ends), gathered and sent
 * as one round trip: a node with a thousand jobs due in the same second claims them in one store call, not
 * a thousand. Each call gets its own reply. Calls that the store cannot take together (`alone`: a Redis
 * Cluster, whose scripts reach one slot) each go at once, by themselves.
 *
 * A batch goes at the end of the turn of the event loop its first call was made in (`setImmediate`), when
 * that turn was quick. cron fires the jobs due together in the timers phase that starts at their fire
 * time; when that phase runs long (hundreds of ticks), the timers of the rest of the burst come due
 * meanwhile and fire in the phases that follow, a few ms apart, and their calls would make a second and a
 * third round trip. So after a long turn the batch waits until {@link QUIET_MS} pass without a new call
 * (at most {@link MAX_BURST_WAIT_MS}), to the end of a timers phase each time.
 */
export class CallBatch<Request, Reply> {
  private pending: Call<Request, Reply>[] = [];
  /** When the pending batch's first call was made (`performance.now()`). */
  private firstCallAt = 0;

  constructor(
    private readonly sender: BatchSender<Request, Reply>,
    private readonly alone: () => boolean = () => false,
  ) {}

  /** Sends `request` with the others of its burst; `onFailure` sees a store failure before the promise rejects. */
  call(request: Request, onFailure?: (failure: unknown) => void): Promise<Reply> {
    return new Promise<Reply>((resolve, reject) => {
      const call = { request, resolve, reject, onFailure };
      if (this.alone()) return this.send([call]);
      this.pending.push(call);
      if (this.pending.length > 1) return;
      this.firstCallAt = performance.now();
      setImmediate(() => this.flushAfterBurst());
    });
  }

  private flushAfterBurst(): void {
    if (performance.now() - this.firstCallAt < QUICK_TURN_MS) return this.flush();
    this.flushWhenQuiet(this.pending.length, performance.now());
  }

  /**
   * Flushes once {@link QUIET_MS} pass with no call after the first `calls`, or {@link MAX_BURST_WAIT_MS}
   * after `since`.
   */
  private flushWhenQuiet(calls: number, since: number): void {
    const look = () => {
      const more = this.pending.length > calls;
      if (more && performance.now() - since < MAX_BURST_WAIT_MS) this.flushWhenQuiet(this.pending.length, since);
      else this.flush();
    };
    setTimeout(() => setImmediate(look), QUIET_MS);
  }

  private flush(): void {
    const batch = this.pending;
    this.pending = [];
    this.send(batch);
  }

  private send(batch: readonly Call<Request, Reply>[]): void {
    this.sender(batch.map((call) => call.request)).then(
      (replies) => batch.forEach((call, i) => call.resolve(replies[i])),
      (failure: unknown) =>
        batch.forEach((call) => {
          call.onFailure?.(failure);
          call.reject(failure);
        }),
    );
  }
}
