import { InMemoryLockProvider } from '../../lib/index.js';
import { checkedOperatorNote } from '../../lib/operators/operator-note.js';
import { seededRandom, type Random } from '../../lib/provider-tests/seeded-random.js';

/**
 * Random actors and reasons through the one check every operator surface passes (the admin service, the page,
 * the CLI), then into a store. What is accepted must be what the docs allow, and must read back exactly.
 * The rule below is written from the docs (Security page), not from the check. `FUZZ_SEED=<n>` replays a run.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20261127);
const ROUNDS = 3_000;

/** Pieces that strings are made of: plain text and marks, and rarely controls (C0, DEL, C1) or lone surrogates. */
const PIECES = ['a', 'ops', ' ', 'é', '日', '🔒', '\u202e', '\u200b'];
const FORBIDDEN = ['\u0000', '\t', '\n', '\u007f', '\u009b', '\ud83d', '\udd12'];

function randomText(random: Random): unknown {
  const kind = random();
  if (kind < 0.05) return undefined;
  if (kind < 0.1) return [null, 42, {}, ['x'], true][Math.floor(random() * 5)];
  const length = kind < 0.2 ? 90 + Math.floor(random() * 420) : Math.floor(random() * 12);
  let text = '';
  while (text.length < length) {
    const pieces = random() < 0.04 ? FORBIDDEN : PIECES;
    text += pieces[Math.floor(random() * pieces.length)];
  }
  return text;
}

/** A control character (C0, DEL, C1) or a UTF-16 surrogate that has no partner. */
function hasForbidden(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true;
    const high = code >= 0xd800 && code <= 0xdbff;
    const low = code >= 0xdc00 && code <= 0xdfff;
    if (high) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) i++;
      else return true;
    } else if (low) return true;
  }
  return false;
}

/** What the docs allow: an actor of 1 to 100 characters, not blank; a reason of at most 500; no forbidden text. */
function allowed(actor: unknown, reason: unknown): boolean {
  if (typeof actor !== 'string' || actor.trim() === '' || actor.length > 100 || hasForbidden(actor)) return false;
  if (reason === undefined) return true;
  return typeof reason === 'string' && reason.length <= 500 && !hasForbidden(reason);
}

describe('operator notes, fuzzed', () => {
  it(`accepts exactly what the docs allow, and a store reads it back (seed ${SEED})`, async () => {
    const random = seededRandom(SEED);
    const store = new InMemoryLockProvider({ node: 'fuzz' }).operatorProvider();
    let accepted = 0;
    for (let round = 0; round < ROUNDS; round++) {
      const actor = randomText(random);
      const reason = randomText(random);
      const note = { actor, reason } as { actor: string; reason?: string };
      const expected = allowed(actor, reason);
      let error: unknown;
      try {
        checkedOperatorNote(note);
      } catch (thrown) {
        error = thrown;
      }
      const seen = { round, actor, reason, accepted: error === undefined };
      expect(seen).toEqual({ round, actor, reason, accepted: expected });
      if (error !== undefined) {
        expect(error).toMatchObject({
          name: 'InvalidOperatorNoteError',
          field: expect.stringMatching(/^(actor|reason)$/),
        });
        continue;
      }
      accepted++;
      const lockName = `job-${round}`;
      expect(await store.pause(lockName, note)).toBe(true);
      const [entry] = await store.history(lockName, 1);
      expect(entry).toMatchObject({ actor, ...(reason === undefined ? {} : { reason }) });
    }
    // Both sides of the rule were tried often.
    expect(accepted).toBeGreaterThan(ROUNDS / 10);
    expect(ROUNDS - accepted).toBeGreaterThan(ROUNDS / 10);
  });
});
