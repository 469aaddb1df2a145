import { pathToFileURL } from 'node:url';
import type { EventLoopBlock } from './fixtures/worker-protocol.js';
import { builtFixture, type WorkerLaunch } from './worker-cluster.js';

/** A worker whose wall clock reads `shiftMs` ahead of the machine's (behind when negative); see fixtures/shift-clock.ts. */
export function withShiftedClock(instance: string, shiftMs: number): WorkerLaunch {
  return {
    instance,
    nodeArgs: ['--import', pathToFileURL(builtFixture('shift-clock')).href],
    env: { CLOCK_SHIFT_MS: String(shiftMs) },
  };
}

/** A worker that stalls its event loop once, around a fire time; see {@link EventLoopBlock}. */
export function withBlockedEventLoop(instance: string, block: EventLoopBlock): WorkerLaunch {
  return { instance, env: { BLOCK_EVENT_LOOP: JSON.stringify(block) } };
}
