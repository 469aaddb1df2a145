import { readdirSync, readFileSync } from 'node:fs';
import { CLAIM_REFUSALS, type ClaimRefusal, type ClaimRefusalCode } from '../../lib/providers/claim-refusals.js';
import { OWNER_CHECKS, type OwnerCheck, type OwnerCheckCode } from '../../lib/providers/owner-checks.js';
import { postgresTables } from '../../lib/providers/postgres/postgres-schema.js';
import { ownerOutcome as postgresOutcome } from '../../lib/providers/postgres/postgres-simple-lock.js';
import {
  claimRefusal as postgresRefusal,
  postgresStatements,
} from '../../lib/providers/postgres/postgres-statements.js';
import type { CodeTable } from '../../lib/providers/code-tables.js';
import { luaName, luaSource } from '../../lib/providers/redis/lua-script.js';
import { LUA_SCRIPTS } from '../../lib/providers/redis/lua-scripts.generated.js';
import { ownerOutcome as redisOutcome, claimRefusal as redisRefusal } from '../../lib/providers/redis/redis-scripts.js';

// Issue 28: a claim's refusal and a release's or renewal's owner check each have one code in one table
// (claim-refusals.ts, owner-checks.ts). The Lua scripts get it when they load, the SQL statements as a literal;
// each store decodes it in one function. These checks fail when a script, a statement or a decoder goes its own way.

const LUA = new URL('../../lib/providers/redis/lua/', import.meta.url);
const SCRIPTS = Object.keys(LUA_SCRIPTS) as (keyof typeof LUA_SCRIPTS)[];
const REFUSALS = Object.entries(CLAIM_REFUSALS) as [ClaimRefusal, number][];
const CHECKS = Object.entries(OWNER_CHECKS) as [OwnerCheck, OwnerCheckCode][];
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

describe.each([
  ['claim refusal', CLAIM_REFUSALS, ['acquire.lua', 'acquire-job.lua', 'claim-occurrence.lua', 'recover.lua']],
  ['owner check', OWNER_CHECKS, ['finish.lua', 'release.lua', 'release-owner.lua', 'renew.lua', 'renew-owner.lua']],
] as [string, CodeTable, string[]][])('the %s codes of the Redis scripts', (_table, codes, answering) => {
  const names = new RegExp(`\\b(${Object.keys(codes).map(luaName).join('|')})\\b`);
  const naming = SCRIPTS.filter((file) => names.test(withoutComments(LUA_SCRIPTS[file])));

  it('are named by the scripts that answer with them', () => {
    expect(naming).toEqual(expect.arrayContaining(answering));
  });

  it.each(naming)('%s defines each one it names with the code of the table, as it is sent', (file) => {
    const defined = luaDefinitions(luaSource(file));
    for (const [reply, code] of Object.entries(codes)) expect([reply, defined[luaName(reply)]]).toEqual([reply, code]);
  });

  it.each(naming)('%s answers with no bare number, which the table could not follow', (file) => {
    // `return 1`, `return {0}`, `return holder and -1 or 0`, `outcomes[i] = 0`.
    const bare = /\breturn \{?-?\d|\breturn [\w.]+ and -?\d|\] = -?\d/;
    expect([file, withoutComments(luaSource(file)).match(bare)?.[0]]).toEqual([file, undefined]);
  });

  it('are defined by no file of lua/ itself', () => {
    for (const file of readdirSync(LUA)) {
      const defined = Object.keys(luaDefinitions(readFileSync(new URL(file, LUA), 'utf8')));
      expect([file, defined.filter((name) => names.test(name))]).toEqual([file, []]);
    }
  });
});

describe('the Redis decoders', () => {
  it.each(REFUSALS)('decode the claim refusal %s from its code; a fence (positive) is taken', (refusal, code) => {
    expect(redisRefusal(code)).toBe(refusal);
    expect(redisRefusal(1)).toBe('taken');
  });

  it.each(CHECKS)('decode the owner check %s from its code', (check, code) => {
    expect(redisOutcome(code, 'done')).toBe(check === 'held' ? 'done' : check);
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

it('PostgreSQL decodes how a lock stood (mine, live) to the owner check Redis decodes from its code', () => {
  const { held, expired, 'not-owner': notOwner } = OWNER_CHECKS;
  const row = (mine: boolean | null, live: boolean | null) => ({ name: 'job', mine, live });
  const pairs: [Parameters<typeof postgresOutcome>[0], OwnerCheckCode][] = [
    [row(true, true), held],
    [row(false, true), notOwner],
    [row(null, true), notOwner],
    [row(true, false), expired],
    [row(false, false), expired],
    [undefined, expired],
  ];
  for (const [stood, code] of pairs)
    expect([stood, postgresOutcome(stood, 'done')]).toEqual([stood, redisOutcome(code, 'done')]);
});

it('a code not in its table is an error in both stores, not a reply guessed', () => {
  const unknown = Math.min(...Object.values(CLAIM_REFUSALS)) - 1;
  expect(() => redisRefusal(unknown)).toThrow(`No claim refusal has the code ${unknown}`);
  expect(() => postgresRefusal({ refusal: unknown as never })).toThrow(`No claim refusal has the code ${unknown}`);
  const unchecked = Math.max(...Object.values(OWNER_CHECKS)) + 1;
  expect(() => redisOutcome(unchecked as never, 'done')).toThrow(`No owner check has the code ${unchecked}`);
});
