import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import { CLAIM_REFUSALS } from '../claim-refusals.js';
import type { CodeTable } from '../code-tables.js';
import { OWNER_CHECKS } from '../owner-checks.js';
import { LUA_SCRIPTS } from './lua-scripts.generated.js';
import type { RedisClient } from './redis-client.js';
import { redisFailure, replyCode, type ScriptCommands } from './redis-failures.js';

/** A key or an argument of a script call. */
export type ScriptArgument = string | number;

/** A reply's name in Lua, a local of the script: `already-ran` is `ALREADY_RAN`. */
export function luaName(reply: string): string {
  return reply.toUpperCase().replaceAll('-', '_');
}

/** The Lua line that defines each code of `codes` as a local (`local LOCKED, ALREADY_RAN, PAUSED = 0, -1, -2`). */
function luaLocals(codes: CodeTable): string {
  return `local ${Object.keys(codes).map(luaName).join(', ')} = ${Object.values(codes).join(', ')}`;
}

/**
 * Where a script's source wants a table's codes defined (its first such marker line), and the line that does:
 * claim refusals (claim-refusals.ts) and owner checks (owner-checks.ts).
 */
const CODE_LINES: readonly (readonly [RegExp, string])[] = [
  [/^-- @claim-refusals$/m, luaLocals(CLAIM_REFUSALS)],
  [/^-- @owner-checks$/m, luaLocals(OWNER_CHECKS)],
];

/** Script `file` as it is sent: its includes in place, and the tables' codes where it asks for them. */
export function luaSource(file: keyof typeof LUA_SCRIPTS): string {
  return CODE_LINES.reduce((source, [marker, line]) => source.replace(marker, line), LUA_SCRIPTS[file]);
}

/**
 * One of the `lua/` scripts, called as `EVALSHA` with its SHA1 computed here once. When the server answers
 * NOSCRIPT (it restarted, a replica was promoted, someone ran `SCRIPT FLUSH`, a Cluster node never saw the
 * script), the same call is sent once as `EVAL`, which runs the script and caches it on that server. NOSCRIPT
 * means the script did not run, so the resend cannot apply it twice.
 *
 * Called through ioredis's plain `evalsha`, not `defineCommand`: its script wrapper (a command subclass and a
 * `.catch` layer per call) cost ~0.4 µs per call, which a lock cycle at c=64 feels.
 */
export class LuaScript {
  private readonly source: string;
  private readonly sha: string;
  /** The commands the script runs, named when Redis refuses one of them to the client's user (ACL). */
  private readonly commands: ScriptCommands;

  constructor(file: keyof typeof LUA_SCRIPTS) {
    // The script as `lua/<file>` reads, its includes in place: embedded at build time (scripts/embed-assets.mjs),
    // so loading the provider reads no file, from the CommonJS build, the ESM entries or a bundle alike.
    this.source = luaSource(file);
    this.sha = createHash('sha1').update(this.source).digest('hex');
    const called = [...this.source.matchAll(/redis\.call\('(\w+)'/g)].map(([, command]) => command.toUpperCase());
    this.commands = { file, commands: [...new Set(called)] };
  }

  /**
   * Runs the script with `numberOfKeys` keys first in `keysThenArguments`, and hands its reply to `onReply`.
   * The reply, the NOSCRIPT fallback and the translation of a failure into what it says about Redis
   * ({@link redisFailure}) share one promise step, so a call adds no promise layer of its own. `onFailure`
   * sees that translated failure before the returned promise rejects with it.
   */
  run<Reply, T>(
    client: RedisClient,
    numberOfKeys: number,
    keysThenArguments: readonly ScriptArgument[],
    onReply: (reply: Reply) => T,
    onFailure?: (failure: unknown) => void,
  ): Promise<T> {
    // Typed as one client: the union of Redis's and Cluster's overloaded `evalsha` is not callable in TS.
    const redis = client as Redis;
    const sent = redis.evalsha(this.sha, numberOfKeys, ...keysThenArguments) as Promise<Reply>;
    return sent.then(onReply, (error: unknown) => {
      // Made only on a failure: a call that succeeds allocates one closure less.
      const fail = (failed: unknown): never => this.fail(client, failed, onFailure);
      if (!isNoScript(error)) return fail(error);
      return (redis.eval(this.source, numberOfKeys, ...keysThenArguments) as Promise<Reply>).then(onReply, fail);
    });
  }

  /** Throws what `error` says about Redis ({@link redisFailure}), after `onFailure` has seen it. */
  private fail(client: RedisClient, error: unknown, onFailure: ((failure: unknown) => void) | undefined): never {
    const failure = redisFailure(client, error, this.commands);
    onFailure?.(failure);
    throw failure;
  }

  /** {@link run} for callers that take the reply as it is. */
  call<Reply>(client: RedisClient, numberOfKeys: number, keysThenArguments: readonly ScriptArgument[]): Promise<Reply> {
    return this.run(client, numberOfKeys, keysThenArguments, same<Reply>);
  }
}

function isNoScript(error: unknown): boolean {
  return replyCode(error) === 'NOSCRIPT';
}

function same<T>(reply: T): T {
  return reply;
}
