/**
 * Random option values for the options fuzz test, from a seeded generator (mulberry32), so a failure replays, and
 * what the option interfaces' TSDoc allows of them, written from the docs rather than from the checks.
 */

/** The password in every URL the generator makes: it must never appear in a message. */
export const PASSWORD = 's3cret';

/** 2^31-1: the largest count, and the longest Node.js timer in ms. */
export const MAX_INT = 2 ** 31 - 1;

import type { Random } from '../../lib/provider-tests/seeded-random.js';

export { seededRandom, type Random } from '../../lib/provider-tests/seeded-random.js';

export function pick<T>(random: Random, values: readonly T[]): T {
  return values[Math.floor(random() * values.length)];
}

/** Duration strings the README documents, with their length in ms. */
/** The durations inside the objects drawn below (`{ lease: '1s' }`), kept apart: they are not drawn themselves. */
const NESTED_DURATION_TEXT: Readonly<Record<string, number>> = { '1s': 1_000 };
const DURATION_TEXT: Readonly<Record<string, number>> = {
  '500ms': 500,
  '30s': 30_000,
  '1m': 60_000,
  '1h30m': 5_400_000,
  '1.5s': 1_500,
  '0ms': 0,
  '0': 0,
  '2000': 2_000,
  PT30S: 30_000,
  P1D: 86_400_000,
  '24d': 24 * 86_400_000,
  '25d': 25 * 86_400_000,
};

/** Text that is none of: a duration, a SQL identifier, a URL with credentials. */
const OTHER_TEXT = [
  '',
  ' ',
  'ten minutes',
  '-5s',
  '2000; DROP TABLE canary',
  "x'; DROP TABLE y; --",
  'x"; DROP TABLE y; --',
  'true',
  'false',
  'null',
  'NaN',
  'Infinity',
  '1e3',
  '0x10',
  'fail',
  'warn',
  'é',
  '💥',
  'a'.repeat(59),
];

const IDENTIFIERS = ['public', 'my_schema', '_x', 'locks2', 'a'.repeat(58), '1abc', 'has space', 'has-dash'];

const URLS = [
  `redis://app:${PASSWORD}@cache:6379`,
  `postgres://app:${PASSWORD}@db:5432/jobs`,
  `http://user:${PASSWORD}@example.com`,
];

const NUMBERS = [0, -0, 1, -1, 2, 0.5, 2.5, 1e-9, 42, 1_999, 2_000, 60_000, 120_000, MAX_INT - 1_000, MAX_INT - 999];
const EXTREMES = [MAX_INT, MAX_INT + 1, 1e12, 1e300, Number.MAX_SAFE_INTEGER, -1e12, NaN, Infinity, -Infinity];

/** A value from one of the families that options get wrong: numbers, text, SQL, objects, arrays, nothing. */
export function randomValue(random: Random): unknown {
  const family = Math.floor(random() * 10);
  if (family === 0) return pick(random, NUMBERS);
  if (family === 1) return pick(random, EXTREMES);
  if (family === 2) return Math.floor(random() * 10 ** Math.floor(random() * 13)) * (random() < 0.2 ? -1 : 1);
  if (family === 3) return random() * 10 ** Math.floor(random() * 6);
  if (family === 4) return pick(random, Object.keys(DURATION_TEXT));
  if (family === 5) return pick(random, [...OTHER_TEXT, ...URLS]);
  if (family === 6) return pick(random, IDENTIFIERS);
  if (family === 7) return pick(random, [true, false, undefined, null]);
  if (family === 8) return pick(random, [{}, [], [1], { lease: '1s' }, { lease: 0 }, { url: URLS[0] }, [URLS[1]]]);
  return pick(random, [() => 1, Symbol('value'), 10n, new Date(0), { around: 'no' }]);
}

/** `key` as a user mistypes it: another case, two letters swapped, one letter dropped, or cut short. */
export function misspelled(random: Random, key: string): string {
  if (key.length < 4) return `${key}s`;
  const at = 1 + Math.floor(random() * (key.length - 2));
  const typos = [
    key.toLowerCase(),
    key.slice(0, at) + key[at + 1] + key[at] + key.slice(at + 2),
    key.slice(0, at) + key.slice(at + 1),
    key.slice(0, Math.max(2, at)),
  ];
  return typos.find((typo) => typo !== key && random() < 0.5) ?? `${key}s`;
}

/** What the docs call a duration, in ms: a number of ms (finite, not negative) or a documented string. */
export function durationMs(value: unknown): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) && value >= 0 ? value : undefined;
  return typeof value === 'string' ? (DURATION_TEXT[value] ?? NESTED_DURATION_TEXT[value]) : undefined;
}

/** A duration greater than 0 and at most `max` ms. */
export function isPositiveDuration(value: unknown, max = Infinity): boolean {
  const ms = durationMs(value);
  return ms !== undefined && ms > 0 && ms <= max;
}

export function isWholeNumber(value: unknown, min: number, max: number): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max;
}

export function isNonEmptyString(value: unknown): boolean {
  return typeof value === 'string' && value !== '';
}

/** The docs' identifier: letters, digits and underscores, not starting with a digit, at most 58 characters. */
export function isIdentifier(value: unknown): boolean {
  if (typeof value !== 'string' || value.length < 1 || value.length > 58) return false;
  const allowed = (char: string) => char === '_' || (char >= 'a' && char <= 'z') || (char >= 'A' && char <= 'Z');
  const digit = (char: string) => char >= '0' && char <= '9';
  return [...value].every((char) => allowed(char) || digit(char)) && !digit(value[0]);
}

/** An object that can hold options: not null, not an array. */
export function isOptionsObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
