/**
 * The option a mistyped `key` most likely meant: the first of `known` it begins (any case), else one a letter
 * or two away (a typo, a swap), scaled to the key's length so that a short key is not matched to anything.
 */
export function closestOption(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  return (
    known.find((option) => option.toLowerCase().startsWith(lower)) ??
    known.find((option) => editDistance(option.toLowerCase(), lower) <= Math.min(2, lower.length / 3))
  );
}

/** How many letters to insert, delete, change or swap to turn `a` into `b` (optimal string alignment). */
function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) rows[0][j] = j;
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const change = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + change);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}
