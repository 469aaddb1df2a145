import type { MemorySample, NodeWarnings, ReportMessage, SecondSample } from './node-messages.js';

/** The first few warning texts a report carries, to say why a phase was not clean. */
const WARNING_TEXTS = 5;

/**
 * A node's record of its job runs, kept in memory until the bench asks for it: per occurrence second, a
 * byte per job counting its runs, and a histogram of whole-millisecond delays. Recording a run is two
 * array or map writes, so recording does not weigh on what is measured.
 */
export class TickRecorder {
  private readonly runs = new Map<number, Uint8Array>();
  private readonly delays = new Map<number, Map<number, number>>();
  private readonly samples = new Map<number, SecondSample>();
  private readonly warningTexts: string[] = [];
  private warningCount = 0;
  private runsWithoutLock = 0;
  private lateTicks = 0;
  private readonly earlyClaims = new Map<number, number>();
  private readonly skips = new Map<number, Record<string, number>>();

  constructor(private readonly jobs: number) {}

  /** One run of job `job` for the occurrence at `occurrenceMs`, started `delayMs` after its tick's fire time. */
  record(job: number, occurrenceMs: number, delayMs: number): void {
    const second = Math.round(occurrenceMs / 1_000);
    let counts = this.runs.get(second);
    if (!counts) this.runs.set(second, (counts = new Uint8Array(this.jobs)));
    if (counts[job] < 255) counts[job] += 1;
    let histogram = this.delays.get(second);
    if (!histogram) this.delays.set(second, (histogram = new Map()));
    histogram.set(delayMs, (histogram.get(delayMs) ?? 0) + 1);
  }

  /** A run of a locked job that found no lock in its context: a bug the report must show. */
  recordRunWithoutLock(): void {
    this.runsWithoutLock += 1;
  }

  /** A locked run claimed `occurrenceMs`, later than its tick's fire time (see {@link ReportMessage.earlyClaims}). */
  recordEarlyClaim(occurrenceMs: number): void {
    const second = Math.round(occurrenceMs / 1_000);
    this.earlyClaims.set(second, (this.earlyClaims.get(second) ?? 0) + 1);
  }

  /** cron fired a tick at once because its timer was already due (see {@link ReportMessage.lateTicks}). */
  recordLateTick(): void {
    this.lateTicks += 1;
  }

  /** The lock module skipped an attempt at `atMs` (epoch ms) for `reason` (`locked`, `provider-error`, …). */
  recordSkip(reason: string, atMs: number): void {
    const second = Math.floor(atMs / 1_000);
    let reasons = this.skips.get(second);
    if (!reasons) this.skips.set(second, (reasons = {}));
    reasons[reason] = (reasons[reason] ?? 0) + 1;
  }

  recordWarning(text: string): void {
    this.warningCount += 1;
    if (this.warningTexts.length < WARNING_TEXTS) this.warningTexts.push(text);
  }

  /** Keeps the running totals read at half past wall-clock second `second`. */
  recordSample(second: number, sample: SecondSample): void {
    this.samples.set(second, sample);
  }

  report(memory: MemorySample): ReportMessage {
    const warnings: NodeWarnings = { count: this.warningCount, first: this.warningTexts };
    return {
      type: 'report',
      memory,
      runs: Object.fromEntries(
        [...this.runs].map(([second, counts]) => [second, Buffer.from(counts).toString('base64')]),
      ),
      delays: Object.fromEntries([...this.delays].map(([second, histogram]) => [second, [...histogram]])),
      samples: Object.fromEntries(this.samples),
      runsWithoutLock: this.runsWithoutLock,
      lateTicks: this.lateTicks,
      earlyClaims: Object.fromEntries(this.earlyClaims),
      warnings,
      skips: Object.fromEntries(this.skips),
    };
  }
}
