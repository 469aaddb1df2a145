import { printable } from './terminal-text.js';

/** Space between two columns. */
const GAP = '  ';

/**
 * A plain-text table: a header row, then one row per entry, each column as wide as its widest cell. The last
 * column is not padded, so lines end without trailing spaces. Each cell is {@link printable}: one line, no
 * terminal escapes, whatever the store held.
 */
export function renderTable(headers: readonly string[], cells: readonly (readonly string[])[]): string {
  const rows = cells.map((row) => row.map(printable));
  const widths = headers.map((header, column) => Math.max(header.length, ...rows.map((row) => row[column].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, column) => (column === cells.length - 1 ? cell : cell.padEnd(widths[column])))
      .join(GAP)
      .trimEnd();
  return [line(headers), ...rows.map(line)].join('\n');
}

/** `label: value` lines, the values aligned, each {@link printable}. */
export function renderFields(fields: readonly (readonly [label: string, value: string])[]): string {
  const width = Math.max(...fields.map(([label]) => label.length)) + 1;
  return fields.map(([label, value]) => `${`${label}:`.padEnd(width)} ${printable(value)}`).join('\n');
}
