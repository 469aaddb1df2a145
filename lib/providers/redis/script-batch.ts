import type { LuaScript, ScriptArgument } from './lua-script.js';
import type { RedisClient } from './redis-client.js';

interface Call<Reply> {
  readonly keys: readonly ScriptArgument[];
  readonly args: readonly ScriptArgument[];
  readonly resolve: (reply: Reply) => void;
  readonly reject: (failure: unknown) => void;
  readonly onFailure?: (failure: unknown) => void;
}

/** A turn of the event loop shorter than this held a whole burst: its batch goes at once, adding no wait. */
const QUICK_TURN_MS = 5;
/** A burst is over once this long passes without a new call. */
const QUIET_MS = 5;
/** The longest a batch waits for the rest of its burst, after the turn of its first call. */
const MAX_BURST_WAIT_MS = 100;

/**
 * Calls of a script that takes one or more jobs (`claim-occurrence.lua`, `acquire-job.lua`, `finish.lua`),
 * gathered and sent as one script call: a node with a thousand jobs due in the same second claims them in
 * one round trip, not a thousand. Each call gets its own reply. On a Cluster each call goes alone: a
 * script cannot reach keys of several slots.
 *
 * A batch goes at the end of the turn of the event loop its first call was made in (`setImmediate`), when
 * that turn was quick. cron fires the jobs due together in the timers phase that starts at their fire
 * time; when that phase runs long (hundreds of ticks), the timers of the rest of the burst come due
 * meanwhile and fire in the phases that follow, a few ms apart, and their calls would make a second and a
 * third round trip. So after a long turn the batch waits until {@link QUIET_MS} pass without a new call
 * (at most {@link MAX_BURST_WAIT_MS}), to the end of a timers phase each time.
 */
export class ScriptBatch<Reply> {
  private pending: Call<Reply>[] = [];
  /** When the pending batch's first call was made (`performance.now()`). */
  private firstCallAt = 0;

  constructor(
    private readonly script: LuaScript,
    private readonly client: RedisClient,
  ) {}

  /** Runs the script for one job, `keys` and `args` being that job's share; `onFailure` sees a store failure. */
  call(keys: readonly ScriptArgument[], args: readonly ScriptArgument[], onFailure?: (failure: unknown) => void) {
    return new Promise<Reply>((resolve, reject) => {
      const call = { keys, args, resolve, reject, onFailure };
      if (this.client.isCluster) return this.send([call]);
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

  private send(batch: readonly Call<Reply>[]): void {
    const keys = batch.flatMap((call) => call.keys);
    const args = batch.flatMap((call) => call.args);
    const delivered = (replies: Reply[]) => batch.forEach((call, i) => call.resolve(replies[i]));
    const failed = (failure: unknown) => batch.forEach((call) => call.onFailure?.(failure));
    this.script
      .run(this.client, keys.length, [...keys, ...args], delivered, failed)
      .catch((failure: unknown) => batch.forEach((call) => call.reject(failure)));
  }
}
