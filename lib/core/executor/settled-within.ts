/** Whether all `promises` settled within `ms`. */
export async function settledWithin(promises: Iterable<Promise<unknown>>, ms: number): Promise<boolean> {
  const list = [...promises];
  if (list.length === 0) return true;
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), ms);
    timer.unref();
  });
  try {
    return await Promise.race([Promise.allSettled(list).then(() => true), expired]);
  } finally {
    clearTimeout(timer);
  }
}
