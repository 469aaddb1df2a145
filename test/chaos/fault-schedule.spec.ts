import { FAULT_KINDS } from './journal.js';
import { planFaults, TAIL_MS, WARMUP_MS } from './fault-schedule.js';

const NODES = ['app-1', 'app-2', 'app-3'];

describe('planFaults', () => {
  it('gives the same plan for the same seed, and another for another seed', () => {
    const plan = planFaults({ seed: 1234, soakMs: 600_000, nodes: NODES, store: 'redis' });

    expect(planFaults({ seed: 1234, soakMs: 600_000, nodes: NODES, store: 'redis' })).toEqual(plan);
    expect(planFaults({ seed: 1235, soakMs: 600_000, nodes: NODES, store: 'redis' }).faults).not.toEqual(plan.faults);
  });

  it('starts with one fault of each kind, one at a time, inside the soak', () => {
    const soakMs = 600_000;
    const { faults } = planFaults({ seed: 99, soakMs, nodes: NODES, store: 'postgres' });

    expect(new Set(faults.slice(0, FAULT_KINDS.length).map((fault) => fault.kind))).toEqual(new Set(FAULT_KINDS));
    expect(faults[0].atMs).toBeGreaterThanOrEqual(WARMUP_MS);
    for (const [i, fault] of faults.entries()) {
      const app = fault.kind === 'leader-kill' ? 'leader' : expect.stringMatching(/^app-[123]$/);
      expect(fault.target).toEqual(fault.kind.startsWith('store-') ? 'postgres' : app);
      expect(fault.atMs + fault.durationMs).toBeLessThanOrEqual(soakMs - TAIL_MS);
      if (i > 0) expect(fault.atMs).toBeGreaterThan(faults[i - 1].atMs + faults[i - 1].durationMs);
    }
  });

  it('shortens the quiet gaps of a short soak so that every kind still fits, and refuses one too short', () => {
    const short = planFaults({ seed: 7, soakMs: 75_000, nodes: NODES, store: 'redis' });

    expect(new Set(short.faults.map((fault) => fault.kind))).toEqual(new Set(FAULT_KINDS));
    expect(short.quietMs[1]).toBeLessThan(16_000);
    expect(() => planFaults({ seed: 7, soakMs: 30_000, nodes: NODES, store: 'redis' })).toThrow(
      /A 30 s soak cannot hold one fault of each kind; give it at least \d+ s/,
    );
  });
});
