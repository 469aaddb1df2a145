/** Rejections no handler took while a {@link watchUnhandledRejections} watch was on. */
export interface UnhandledRejectionWatch {
  readonly reasons: unknown[];
  stop(): void;
}

/**
 * Listens for `unhandledRejection` on the real Node.js process. Inside a jest test, `process` is a
 * sandbox copy whose `on()` never hears this event, so the real one is taken from a function created
 * by the host realm (`setTimeout` is the host's), which sees the host's global `process`.
 */
export function watchUnhandledRejections(): UnhandledRejectionWatch {
  const hostProcess = (setTimeout.constructor as FunctionConstructor)('return process')() as NodeJS.Process;
  const reasons: unknown[] = [];
  const listener = (reason: unknown) => reasons.push(reason);
  hostProcess.on('unhandledRejection', listener);
  return { reasons, stop: () => hostProcess.off('unhandledRejection', listener) };
}
