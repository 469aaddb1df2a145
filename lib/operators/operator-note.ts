import type { OperatorNote } from './cluster-records.js';

/** The longest `reason` an operator action takes: it is kept in the history and sent on every poll of the page. */
export const REASON_MAX_LENGTH = 500;
/** The longest `actor`: a user name, a service account, `cli:<user>`. */
export const ACTOR_MAX_LENGTH = 100;

/**
 * Control characters (C0, DEL, C1; a NUL is refused by PostgreSQL's jsonb) and lone surrogates (no UTF-8 has
 * them): neither belongs in who steered or why.
 */
const FORBIDDEN = /[\p{Cc}\p{Cs}]/u;

/** An operator note the admin refuses to record: the status page answers 400, the CLI exits 2. */
export class InvalidOperatorNoteError extends Error {
  override readonly name = 'InvalidOperatorNoteError';
  constructor(
    /** The note's field: `actor` or `reason`. */
    readonly field: 'actor' | 'reason',
    /** What is wrong with it, after the field's name: `must be at most 500 characters (got 501)`. */
    readonly problem: string,
  ) {
    super(`${field} ${problem}`);
  }
}

/**
 * `note`, checked before anything is read or written: an `actor` that is not blank, at most
 * {@link ACTOR_MAX_LENGTH} characters; an optional `reason` of at most {@link REASON_MAX_LENGTH}; in
 * both, no control character and no lone surrogate. The admin service, the status page and the CLI pass here.
 * @throws InvalidOperatorNoteError
 */
export function checkedOperatorNote(note: OperatorNote): OperatorNote {
  const { actor, reason } = note ?? {};
  if (typeof actor !== 'string' || actor.trim() === '')
    throw new InvalidOperatorNoteError('actor', 'must not be empty');
  checkText('actor', actor, ACTOR_MAX_LENGTH);
  if (reason !== undefined) {
    if (typeof reason !== 'string')
      throw new InvalidOperatorNoteError('reason', `must be a string (got ${typeof reason})`);
    checkText('reason', reason, REASON_MAX_LENGTH);
  }
  return note;
}

function checkText(field: 'actor' | 'reason', text: string, maxLength: number): void {
  if (text.length > maxLength)
    throw new InvalidOperatorNoteError(field, `must be at most ${maxLength} characters (got ${text.length})`);
  const forbidden = FORBIDDEN.exec(text);
  if (forbidden) {
    const code = `U+${forbidden[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`;
    const kind = /\p{Cs}/u.test(forbidden[0]) ? 'a lone surrogate' : 'a control character';
    throw new InvalidOperatorNoteError(field, `must not contain ${kind} (${code} at index ${forbidden.index})`);
  }
}
