/**
 * The characters a terminal runs or hides rather than shows, beyond C0: DEL, the C1 controls (U+009B starts a
 * command, like ESC [), the marks that reorder or hide text (bidi marks, overrides and isolates, zero-width and
 * line/paragraph separators). In text from the store they would retitle, clear or recolour, or forge a line.
 */
const HIDDEN = '\\u007f-\\u009f\\u061c\\u200b-\\u200f\\u2028-\\u202e\\u2066-\\u2069\\ufeff';
/** {@link HIDDEN} and the C0 controls: what a table cell never holds. */
const UNPRINTABLE = new RegExp(`[\\u0000-\\u001f${HIDDEN}]`, 'g');
const HIDDEN_IN_JSON = new RegExp(`[${HIDDEN}]`, 'g');
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `\u009b`: the JSON (and JavaScript) escape of one UTF-16 unit. */
function unicodeEscape(character: string): string {
  return `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/** `text` on one line, each unprintable character shown as its escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, (character) => SHORT_ESCAPES[character] ?? unicodeEscape(character));
}

/** {@link printable} for each line of `text`: its line breaks kept, nothing else unprintable. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

/**
 * `value` as indented JSON whose strings show no character a terminal runs or hides: JSON escapes C0 itself,
 * and every {@link HIDDEN} one (only ever inside a string) becomes its `\uXXXX`, which parses back the same.
 */
export function printableJson(value: unknown): string {
  return JSON.stringify(value, null, 2).replace(HIDDEN_IN_JSON, unicodeEscape);
}
