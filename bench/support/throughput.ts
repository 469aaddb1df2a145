/**
 * Runs `op` in `concurrency` async workers, each awaiting its previous call before the next, for
 * `durationMs`, and returns completed calls per second. A worker's number is passed to `op` so that
 * each worker can use its own lock. A rejection of `op` rejects the whole measurement.
 */
export async function measureThroughput(
  op: (worker: number) => Promise<unknown>,
  concurrency: number,
  durationMs: number,
): Promise<number> {
  let completed = 0;
  const startedAt = performance.now();
  const deadline = startedAt + durationMs;
  const worker = async (index: number): Promise<void> => {
    while (performance.now() < deadline) {
      await op(index);
      completed += 1;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, (_, index) => worker(index)));
  // Elapsed time includes the calls still in flight at the deadline, which are counted too.
  return completed / ((performance.now() - startedAt) / 1000);
}
