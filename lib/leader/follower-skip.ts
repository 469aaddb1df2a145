import type { LockAcquisition } from '../core/executor/lock-acquisition.js';

/**
 * How a node that follows takes the lock of a job that runs on the leader: it does not. The tick is skipped
 * (`follower`) without a store call, so the store's work per tick does not grow with the number of nodes.
 */
export const FOLLOWER_SKIP: LockAcquisition = {
  acquire: () => Promise.resolve({ executed: false, reason: 'follower' }),
};
