import type { LuaScript, RedisClient, ScriptArgument } from './redis-scripts.js';

interface Call<Reply> {
  readonly keys: readonly ScriptArgument[];
  readonly args: readonly ScriptArgument[];
  readonly resolve: (reply: Reply) => void;
  readonly reject: (failure: unknown) => void;
  readonly onFailure?: (failure: unknown) => void;
}

/**
 * Calls of a script that takes one or more jobs (`claim-occurrence.lua`, `acquire-job.lua`, `finish.lua`),
 * gathered for one turn of the event loop and sent as one script call: cron fires the jobs due in the same
 * second in one timers phase, so a node with a thousand of them claims them in one round trip, not a
 * thousand. Each call gets its own reply. On a Cluster each call goes alone: a script cannot reach keys of
 * several slots.
 */
export class ScriptBatch<Reply> {
  private pending: Call<Reply>[] = [];

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
      // After the timers phase: every job cron fires in it joins the batch.
      if (this.pending.length === 1) setImmediate(() => this.flush());
    });
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
