import { readdirSync, readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { luaSource } from '../../lib/providers/redis/lua-script.js';
import { LUA_SCRIPTS } from '../../lib/providers/redis/lua-scripts.generated.js';
import { serverKeyPositions, undeclaredKeys, type KeyPositionsOf } from '../support/lua-key-check.js';
import { sharedRedis } from '../support/shared-redis.js';

// Every key a script touches must be one of its KEYS: Dragonfly refuses a script that touches any other
// (bullmq #2463), and on a Redis Cluster only declared keys are routed to the node that owns them. Each script
// is checked as it is sent: its includes in place (scripts/embed-assets.mjs), its codes too (luaSource).

const LUA = new URL('../../lib/providers/redis/lua/', import.meta.url);
const INCLUDES = readdirSync(LUA).filter((file) => file.endsWith('.include.lua'));
/** Includes are checked where they are included: a helper's keys are its callers' arguments. */
const SCRIPTS = Object.keys(LUA_SCRIPTS) as Array<keyof typeof LUA_SCRIPTS>;
const includeSource = (file: string) => readFileSync(new URL(file, LUA), 'utf8');

let client: Redis;
let positionsOf: KeyPositionsOf;
beforeAll(() => {
  client = sharedRedis();
  positionsOf = serverKeyPositions(client);
});
afterAll(() => client.quit());

describe('every key a script touches is declared in KEYS', () => {
  it('finds every script of lua/, and each include in a script', () => {
    expect(SCRIPTS).toEqual(
      readdirSync(LUA)
        .filter((file) => file.endsWith('.lua') && !INCLUDES.includes(file))
        .sort(),
    );
    for (const include of INCLUDES) {
      expect(SCRIPTS.filter((file) => LUA_SCRIPTS[file].includes(includeSource(include)))).not.toEqual([]);
    }
  });

  it.each(SCRIPTS)('%s touches only keys from KEYS, its includes too', async (file) => {
    expect(await undeclaredKeys(luaSource(file), positionsOf)).toEqual([]);
  });

  it.each(SCRIPTS)('%s loads on the server as it is sent (its flags, if any, are accepted)', async (file) => {
    await expect(client.script('LOAD', luaSource(file))).resolves.toMatch(/^[0-9a-f]{40}$/);
  });
});

describe('the key check', () => {
  const reasons = async (source: string) =>
    (await undeclaredKeys(source, positionsOf)).map(({ line, reason }) => `${line}: ${reason}`);

  it.each([
    ['a key from ARGV', "return redis.call('GET', ARGV[1])", "1: GET's key (argument 1) does not come from KEYS"],
    ['a pcall', "return redis.pcall('HGET', ARGV[1], 'f')", "1: HGET's key (argument 1) does not come from KEYS"],
    [
      'a key built from a declared one',
      "local key = KEYS[1] .. ':copy'\nredis.call('SET', key, 1)",
      "2: SET's key (argument 1) does not come from KEYS",
    ],
    [
      'a local given a key, then something else',
      "local key = KEYS[1]\nif ARGV[2] then key = ARGV[1] end\nreturn redis.call('DEL', key)",
      "3: DEL's key (argument 1) does not come from KEYS",
    ],
    [
      'the second key of a multi-key command',
      "return redis.call('MGET', KEYS[1], 'other')",
      "1: MGET's key (argument 2) does not come from KEYS",
    ],
    [
      "a function's parameter, one of whose calls is no key",
      "local function touch(key)\n  redis.call('INCR', key)\nend\ntouch(KEYS[1])\ntouch('elsewhere')",
      "2: INCR's key (argument 1) does not come from KEYS",
    ],
    [
      'a function handed on as a value',
      "local function touch(key) redis.call('DEL', key) end\nlocal t = { touch }\ntouch(KEYS[1])\nt[1](ARGV[1])",
      "1: DEL's key (argument 1) does not come from KEYS",
    ],
    [
      'a command named at run time',
      'return redis.call(ARGV[1], KEYS[1])',
      '1: the command is not named by a string literal, so its keys cannot be placed',
    ],
    [
      'a command with a key count',
      "return redis.call('ZUNIONSTORE', KEYS[1], 1, KEYS[2])",
      '1: ZUNIONSTORE takes a key count, so its keys cannot be placed',
    ],
  ])('refuses %s', async (_what, source, reason) => {
    expect(await reasons(source)).toEqual([reason]);
  });

  it('refuses a derived key in an include, in each script that includes it, at its line as sent', async () => {
    // job-lock.include.lua with its pause marker's key derived from the lock's instead of passed in KEYS.
    const declared = "redis.call('MGET', lockKey, pausedKey)";
    const derived = "redis.call('MGET', lockKey, lockKey .. ':paused')";
    const including = SCRIPTS.filter((file) => LUA_SCRIPTS[file].includes(declared));
    expect(including).toEqual(['acquire-job.lua', 'claim-occurrence.lua', 'recover.lua']);
    for (const file of including) {
      const source = LUA_SCRIPTS[file].replace(declared, derived);
      const line = source.split('\n').findIndex((text) => text.includes(derived)) + 1;
      expect(await undeclaredKeys(source, positionsOf)).toEqual([
        { line, text: `local values = ${derived}`, reason: "MGET's key (argument 2) does not come from KEYS" },
      ]);
    }
  });

  it.each([
    ['KEYS iterated', "for _, key in ipairs(KEYS) do redis.call('DEL', key) end"],
    ['KEYS spread', "return redis.call('DEL', unpack(KEYS))"],
    ['keys and values of MSET', "return redis.call('MSET', KEYS[1], ARGV[1], KEYS[2], ARGV[2])"],
    ['a command without keys', "return redis.call('TIME')"],
    [
      'keys through two functions',
      "local function a(k) return redis.call('GET', k) end\nlocal function b(k) return a(k) end\nreturn b(KEYS[2])",
    ],
  ])('passes %s', async (_what, source) => {
    expect(await reasons(source)).toEqual([]);
  });
});
