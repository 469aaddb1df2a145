import { FORCE_UNLOCK_TAG, OWNER_TAG } from '../core/provider/owner-value.js';
import { seededRandom } from './seeded-random.js';

/**
 * Node names (`node`) that look like what a store writes itself: the markers and tags of the stores that
 * keep an owner as one string (owner-value.ts), the separators of their older formats, quotes and wildcards
 * of SQL, braces of Redis Cluster hash tags, empty, very long and Unicode. No NUL: PostgreSQL's text has none.
 */
export const TRICKY_NODE_NAMES: readonly string[] = [
  'unlocked',
  'unlocked|x',
  'unlocked|',
  '|',
  '||',
  'attacker|web-1',
  'web-1|1700000000000|abcdef12-3456-1',
  ':',
  OWNER_TAG,
  `${OWNER_TAG}1700000000000:abcdef12-3456-1:web-1`,
  FORCE_UNLOCK_TAG,
  `${FORCE_UNLOCK_TAG}1700000000000:admin`,
  FORCE_UNLOCK_TAG.slice(0, -1),
  '',
  ' ',
  "%'_\\",
  '"},{"formerNode":"x',
  '{x}',
  'line\nbreak\ttab',
  'nœud-é',
  '日本語のノード',
  '🔒-node',
  'n'.repeat(5_000),
];

/** Pieces the generated names are made of: separators, tags, letters, Unicode (combining, zero-width, astral). */
const PIECES = [
  '|',
  ':',
  '-',
  '%',
  '_',
  '\\',
  "'",
  '"',
  '{',
  '}',
  ' ',
  '\n',
  'unlocked',
  OWNER_TAG,
  FORCE_UNLOCK_TAG,
  'a',
  'Z',
  '0',
  '9',
  'é',
  '\u0301',
  '\u200b',
  '日',
  '🔒',
];

/**
 * `count` node names drawn from {@link PIECES} by a pseudo-random generator (mulberry32) with a fixed `seed`,
 * so a failure names a node that the next run draws again.
 */
export function generatedNodeNames(count: number, seed = 0x5eed): string[] {
  const random = seededRandom(seed);
  return Array.from({ length: count }, () =>
    Array.from({ length: Math.floor(random() * 9) }, () => PIECES[Math.floor(random() * PIECES.length)]).join(''),
  );
}

/** The names the identity checks try: the tricky ones, then generated ones. */
export const NODE_NAMES: readonly string[] = [...TRICKY_NODE_NAMES, ...generatedNodeNames(40)];
