import { CallBatch } from '../../core/provider/call-batch.js';
import type { LuaScript, ScriptArgument } from './lua-script.js';
import type { RedisClient } from './redis-client.js';

/** One job's share of a batched script call. */
interface ScriptShare {
  readonly keys: readonly ScriptArgument[];
  readonly args: readonly ScriptArgument[];
}

/**
 * Calls of a script that takes one or more jobs (`claim-occurrence.lua`, `acquire-job.lua`, `finish.lua`),
 * gathered by a {@link CallBatch} and sent as one script call, each call getting its own reply. On a
 * Cluster each call goes alone: a script cannot reach keys of several slots.
 */
export class ScriptBatch<Reply> {
  private readonly batch: CallBatch<ScriptShare, Reply>;

  constructor(script: LuaScript, client: RedisClient) {
    this.batch = new CallBatch(
      (shares) => {
        const keys = shares.flatMap((share) => share.keys);
        const args = shares.flatMap((share) => share.args);
        return script.call<Reply[]>(client, keys.length, [...keys, ...args]);
      },
      () => client.isCluster,
    );
  }

  /** Runs the script for one job, `keys` and `args` being that job's share; `onFailure` sees a store failure. */
  call(keys: readonly ScriptArgument[], args: readonly ScriptArgument[], onFailure?: (failure: unknown) => void) {
    return this.batch.call({ keys, args }, onFailure);
  }
}
