import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Redis } from 'ioredis';
import { readScript, SCRIPT_FOLDER } from '../../lib/providers/redis/redis-scripts.js';
import { serverKeyPositions, undeclaredKeys, type KeyPositionsOf } from '../support/lua-key-check.js';
import { sharedRedis } from '../support/shared-redis.js';

// Every key a script touches must be one of its KEYS: Dragonfly refuses a script that touches any other
// (bullmq #2463), and on a Redis Cluster only declared keys are routed to the node that owns them.

const SCRIPTS = readdirSync(fileURLToPath(SCRIPT_FOLDER)).filter((file) => file.endsWith('.lua'));
const INCLUDES = SCRIPTS.filter((file) => file.endsWith('.include.lua'));
/** Includes are checked where they are included: a helper's keys are its callers' arguments. */
const RUNNABLE = SCRIPTS.filter((file) => !INCLUDES.includes(file));
const SAMPLES = new URL('./fixtures/lua-keys/', import.meta.url);

let client: Redis;
let positionsOf: KeyPositionsOf;
beforeAll(() => {
  client = sharedRedis();
  positionsOf = serverKeyPositions(client);
});
afterAll(() => client.quit());

describe('every key a script touches is declared in KEYS', () => {
  it('finds the scripts and their includes', () => {
    expect(RUNNABLE.length).toBeGreaterThanOrEqual(8);
    for (const include of INCLUDES) {
      expect(RUNNABLE.filter((file) => readScript(file).includes(readScript(include)))).not.toEqual([]);
    }
  });

  it.each(RUNNABLE)('%s touches only keys from KEYS, its includes too', async (file) => {
    expect(await undeclaredKeys(readScript(file), positionsOf)).toEqual([]);
  });

  it.each(RUNNABLE)('%s loads on the server as it is sent (its flags, if any, are accepted)', async (file) => {
    await expect(client.script('LOAD', readScript(file))).resolves.toMatch(/^[0-9a-f]{40}$/);
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

  it('refuses a derived key touched in an included helper, at its line in the script as sent', async () => {
    const source = readScript('uses-counter.lua', SAMPLES);
    const found = await undeclaredKeys(source, positionsOf);
    expect(found).toEqual([
      {
        line: 4,
        text: "return redis.call('INCR', key .. ':count')",
        reason: "INCR's key (argument 1) does not come from KEYS",
      },
    ]);
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
