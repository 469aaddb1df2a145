/** The `q` quantile (0..1) of `values`, interpolated linearly between the nearest ranks. */
export function quantile(values: readonly number[], q: number): number {
  if (values.length === 0) throw new Error('quantile of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const position = (sorted.length - 1) * q;
  const below = Math.floor(position);
  const above = Math.ceil(position);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - below);
}

/** The middle value of `values`. */
export function median(values: readonly number[]): number {
  return quantile(values, 0.5);
}
