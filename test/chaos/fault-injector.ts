import { setTimeout as sleep } from 'node:timers/promises';
import type { AppFleet } from './app-fleet.js';
import type { ChaosStore } from './chaos-store.js';
import type { PlannedFault } from './fault-schedule.js';
import type { SoakLine } from './journal.js';
import { monoNow } from './mono-clock.js';

/** What faults are injected into. */
export interface FaultTargets {
  readonly fleet: AppFleet;
  readonly store: ChaosStore;
  readonly record: (line: SoakLine) => void;
}

/**
 * Injects one fault and ends it: `kill -9` an app (or the leader) and start it again, `kill -9` the store's server and
 * restart it on the same port with its data (Redis from its AOF, PostgreSQL replaying its WAL), pause the
 * store (SIGSTOP … SIGCONT), or partition one app through its proxy. Resolves with the fault's window on
 * the monotonic clock: from the injection until the system is whole again (the app ready, the store
 * answering, the partition healed), and the app or store it hit.
 */
export async function injectFault(
  fault: PlannedFault,
  { fleet, store, record }: FaultTargets,
): Promise<{ start: number; end: number; target: string }> {
  switch (fault.kind) {
    case 'app-kill':
    case 'leader-kill': {
      // Between two terms (rare: the last fault ended 2 s ago at least), the first app stands in for the leader.
      const target = fault.kind === 'app-kill' ? fault.target : (fleet.leader ?? fleet.nodes[0]);
      const start = await fleet.kill(target);
      await sleep(fault.durationMs);
      try {
        await fleet.launch(target);
      } catch {
        // Already recorded as an unexpected exit, or it is still booting: the soak goes on without it.
      }
      return { start, end: monoNow(), target };
    }
    case 'store-kill': {
      const start = monoNow();
      record({ type: 'store-exit', store: store.kind, pid: store.pid ?? -1, mono: start, expected: true });
      await store.kill();
      await sleep(fault.durationMs);
      await store.restart();
      return { start, end: monoNow(), target: fault.target };
    }
    case 'store-pause': {
      const start = monoNow();
      await store.pause();
      await sleep(fault.durationMs);
      await store.resume();
      return { start, end: monoNow(), target: fault.target };
    }
    case 'stall':
    case 'black-hole':
    case 'reset': {
      const proxy = fleet.proxy(fault.target);
      const start = monoNow();
      proxy.setMode(fault.kind);
      await sleep(fault.durationMs);
      proxy.setMode('forward');
      return { start, end: monoNow(), target: fault.target };
    }
  }
}
