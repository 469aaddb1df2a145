/** Why a running job's lock was lost. */
export type LockLostReason = 'expired' | 'not-owner' | 'lease-expired' | 'shutdown';

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

/**
 * A lock attempt (or release, renewal) failed because the lock store could not be reached or did not
 * answer in time. The message says which store and why; `reason` is the why alone.
 */
export class LockProviderUnavailableError extends Error {
  override readonly name = 'LockProviderUnavailableError';
  /**
   * The store did not answer in time (`acquireTimeout`, PostgreSQL's `statement_timeout`, the client's own
   * timeout such as ioredis's `commandTimeout`): it may be slow rather than gone, which is why one such
   * failure alone is not yet reported as an outage.
   */
  readonly unanswered: boolean;
  constructor(
    message: string,
    /** What went wrong, e.g. `connection refused (ECONNREFUSED)` or `no answer within 2s`. */
    readonly reason: string,
    options?: { cause?: unknown; unanswered?: boolean },
  ) {
    super(message, options);
    this.unanswered = options?.unanswered === true;
  }
}

/**
 * The lock store refused the module at startup in a way that lasts until someone fixes the
 * configuration: wrong credentials, an ACL without a command the module needs, a TLS certificate that
 * does not verify. The message names the endpoint and the cause, never a password.
 */
export class LockProviderMisconfiguredError extends Error {
  override readonly name = 'LockProviderMisconfiguredError';
  constructor(
    message: string,
    /** What is wrong, e.g. `authentication failed: WRONGPASS`. */
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
