import type { LockLostReason } from './lock-events.js';

/** The reason an aborted {@link LockContext.signal} carries. */
export class LockLostError extends Error {
  override readonly name = 'LockLostError';
  constructor(
    readonly lockName: string,
    readonly reason: LockLostReason,
  ) {
    super(`Lock "${lockName}" was lost (${reason})`);
  }
}

/** Thrown by `extend` outside a locked run, or when the lock can no longer be extended. */
export class LockExtensionError extends Error {
  override readonly name = 'LockExtensionError';
}
