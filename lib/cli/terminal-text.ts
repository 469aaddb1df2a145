/**
 * Control characters (C0, DEL, C1) and the Unicode marks that reorder or hide text (bidi overrides and
 * isolates, zero-width and line/paragraph separators): in text from the store, a terminal would run them as
 * commands (retitle, clear, recolour) or show a forged line.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;
const SHORT_ESCAPES: Readonly<Record<string, string>> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `text` on one line, each unprintable character shown as its escape (`\n`, `\u001b`). */
export function printable(text: string): string {
  return text.replace(
    UNPRINTABLE,
    (character) => SHORT_ESCAPES[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/** {@link printable} for each line of `text`: its line breaks kept, nothing else unprintable. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}
