import { markdownTable } from '../support/table.js';
import { postgresCpuMicros } from './postgres-meter.js';

/** What one contender spent in one case, summed over its slices. */
interface CpuTotals {
  operations: number;
  nodeMicros: number;
  serverMicros: number;
}

/**
 * CPU per operation of each contender in each case, summed over all its slices: this process's (µs exact) and the
 * private cluster's (clock ticks, exact once summed). Unlike throughput, it barely moves with other processes' load.
 */
export class CpuPerOperation {
  /** Per case, per contender, in order of first measurement. */
  private readonly totals = new Map<string, Map<string, CpuTotals>>();

  /** Runs `slice` (resolving to operations per second) and adds its CPU to `contender`'s in `caseLabel`. */
  async measure(caseLabel: string, contender: string, postmaster: number, slice: () => Promise<number>) {
    const serverBefore = postgresCpuMicros(postmaster);
    const nodeBefore = process.cpuUsage();
    const startedAt = performance.now();
    const opsPerSecond = await slice();
    const seconds = (performance.now() - startedAt) / 1000;
    const node = process.cpuUsage(nodeBefore);
    const server = postgresCpuMicros(postmaster) - serverBefore;
    const byContender = this.totals.get(caseLabel) ?? new Map<string, CpuTotals>();
    this.totals.set(caseLabel, byContender);
    const totals = byContender.get(contender) ?? { operations: 0, nodeMicros: 0, serverMicros: 0 };
    byContender.set(contender, totals);
    totals.operations += opsPerSecond * seconds;
    totals.nodeMicros += node.user + node.system;
    totals.serverMicros += server;
    return opsPerSecond;
  }

  /** One row per case and contender: µs per operation, and Node + server over `baseline`'s. */
  table(baseline: string): string {
    const rows = [...this.totals].flatMap(([caseLabel, byContender]) => {
      const perOperation = (t: CpuTotals) => (t.nodeMicros + t.serverMicros) / t.operations;
      const floor = perOperation(byContender.get(baseline)!);
      return [...byContender].map(([contender, t]) => [
        caseLabel,
        contender,
        (t.nodeMicros / t.operations).toFixed(1),
        (t.serverMicros / t.operations).toFixed(1),
        (perOperation(t) / floor).toFixed(3),
      ]);
    });
    const headers = ['case', 'contender', 'Node CPU µs/op', 'server CPU µs/op', 'Node + server ÷ floor'];
    return markdownTable(headers, rows);
  }
}
