import { readdirSync, readFileSync } from 'node:fs';
import { CLAIM_REFUSALS, type ClaimRefusal, type ClaimRefusalCode } from '../../lib/providers/claim-refusals.js';
import { postgresTables } from '../../lib/providers/postgres/postgres-schema.js';
import {
  claimRefusal as postgresRefusal,
  postgresStatements,
} from '../../lib/providers/postgres/postgres-statements.js';
import { luaSource } from '../../lib/providers/redis/lua-script.js';
import { LUA_SCRIPTS } from '../../lib/providers/redis/lua-scripts.generated.js';
import { claimRefusal as redisRefusal } from '../../lib/providers/redis/redis-scripts.js';

// Issue 28: a claim's refusal has one code in one table (claim-refusals.ts). The Lua scripts get it when they
// load, the SQL statements as a literal; each store decodes it in one function. These checks fail when a
// script, a statement or a decoder goes its own way.

const LUA = new URL('../../lib/providers/redis/lua/', import.meta.url);
const SCRIPTS = Object.keys(LUA_SCRIPTS) as (keyof typeof LUA_SCRIPTS)[];
const REFUSALS = Object.entries(CLAIM_REFUSALS) as [ClaimRefusal, number][];
/** A refusal's name in Lua: `already-ran` is `ALREADY_RAN`. */
const luaName = (refusal: string) => refusal.toUpperCase().replace('-', '_');
const LUA_NAMES = new RegExp(`\\b(${REFUSALS.map(([refusal]) => luaName(refusal)).join('|')})\\b`);
const withoutComments = (source: string) => source.replace(/--.*$/gm, '');

/** Name → code as the `local A, B = 1, 2` lines of `source` define them. */
function luaDefinitions(source: string): Record<string, number> {
  const defined: Record<string, number> = {};
  for (const [, names, values] of source.matchAll(/^local ([\w, ]+) = ([-\d, ]+)$/gm)) {
    const codes = values.split(',').map(Number);
    names.split(',').forEach((name, index) => (defined[name.trim()] = codes[index]));
  }
  return defined;
}

describe('the claim refusal codes of the Redis scripts', () => {
  const naming = SCRIPTS.filter((file) => LUA_NAMES.test(withoutComments(LUA_SCRIPTS[file])));

  it('are named by the scripts that take a lock', () => {
    expect(naming).toEqual(
      expect.arrayContaining(['acquire.lua', 'acquire-job.lua', 'claim-occurrence.lua', 'recover.lua']),
    );
  });

  it.each(naming)('%s defines each one it names with the code of the table, as it is sent', (file) => {
    const defined = luaDefinitions(luaSource(file));
    for (const [refusal, code] of REFUSALS) expect([refusal, defined[luaName(refusal)]]).toEqual([refusal, code]);
  });

  it('are defined by no file of lua/ itself', () => {
    for (const file of readdirSync(LUA)) {
      const names = Object.keys(luaDefinitions(readFileSync(new URL(file, LUA), 'utf8')));
      expect([file, names.filter((name) => LUA_NAMES.test(name))]).toEqual([file, []]);
    }
  });

  it.each(REFUSALS)('decode %s from its code; a fence (positive) is taken', (refusal, code) => {
    expect(redisRefusal(code)).toBe(refusal);
    expect(redisRefusal(1)).toBe('taken');
  });
});

describe('the claim refusal codes of the PostgreSQL statements', () => {
  const statements = postgresStatements(postgresTables({ schema: 'public', tablePrefix: 'scheduler_lock_' }));
  /** The refusals a statement's `CASE … END AS refusal` writes, in its order, decoded. */
  const written = (text: string) => {
    const [expression] = /CASE\s[\s\S]*?\sEND AS refusal/.exec(text) ?? [''];
    return [...expression.matchAll(/\b(?:THEN|ELSE) (-?\d+)\b/g)].map(([, code]) =>
      postgresRefusal({ refusal: Number(code) as ClaimRefusalCode }),
    );
  };

  it('are integers of the table in the claims, decoded to what each case means', () => {
    expect(written(statements.lockJobs.text)).toEqual(['paused', 'locked']);
    expect(written(statements.claimOccurrences.text)).toEqual(['already-ran', 'paused', 'locked']);
  });

  it.each(REFUSALS)('decode %s from its code; no row is locked', (refusal, code) => {
    expect(postgresRefusal({ refusal: code as never })).toBe(refusal);
    expect(postgresRefusal(undefined)).toBe('locked');
  });
});

it('a code not in the table is an error in both stores, not a refusal guessed', () => {
  const unknown = Math.min(...Object.values(CLAIM_REFUSALS)) - 1;
  expect(() => redisRefusal(unknown)).toThrow(`No claim refusal has the code ${unknown}`);
  expect(() => postgresRefusal({ refusal: unknown as never })).toThrow(`No claim refusal has the code ${unknown}`);
});
