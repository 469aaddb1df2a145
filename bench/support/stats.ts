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

/**
 * A distribution-free 95 % confidence interval of the median of `values`: the order statistics around the middle
 * whose ranks the binomial distribution (normal approximation) puts 1.96 standard deviations from it.
 */
export function medianInterval(values: readonly number[]): [low: number, high: number] {
  const sorted = [...values].sort((a, b) => a - b);
  const n = sorted.length;
  const spread = (1.96 * Math.sqrt(n)) / 2;
  const low = Math.max(0, Math.floor(n / 2 - spread));
  const high = Math.min(n - 1, Math.ceil(n / 2 + spread) - 1);
  return [sorted[low], sorted[high]];
}

/** Half the width of {@link medianInterval}: how far the median of `values` may be off, at 95 %. */
export function medianUncertainty(values: readonly number[]): number {
  const [low, high] = medianInterval(values);
  return (high - low) / 2;
}
