/** ` (job "name")` after a lock's name in a message, when the lock belongs to a job. */
export function jobLabel(jobName: string | undefined): string {
  return jobName ? ` (job "${jobName}")` : '';
}

/** An error's message, or the thrown value itself when it is not an `Error`. */
export function describeError(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
