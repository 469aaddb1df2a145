import { readFileSync } from 'node:fs';

interface CpuTimes {
  readonly busy: number;
  readonly total: number;
}

/**
 * Samples the whole machine's CPU use (all cores, every process: other work shares this machine)
 * every `intervalMs` from /proc/stat, and hands each sample to `onSample` as a busy percentage.
 * Returns the function that stops it.
 */
export function sampleCpu(intervalMs: number, onSample: (busyPercent: number) => void): () => void {
  let previous = readCpuTimes();
  const timer = setInterval(() => {
    const now = readCpuTimes();
    const total = now.total - previous.total;
    if (total > 0) onSample(Math.round((1_000 * (now.busy - previous.busy)) / total) / 10);
    previous = now;
  }, intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/** The first line of /proc/stat: user nice system idle iowait irq softirq steal … (in clock ticks). */
function readCpuTimes(): CpuTimes {
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0].trim().split(/\s+/).slice(1, 9).map(Number);
  const total = fields.reduce((sum, value) => sum + value, 0);
  const idle = fields[3] + fields[4];
  return { busy: total - idle, total };
}
