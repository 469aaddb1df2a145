import { Injectable, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService } from '@nestjs/core';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { ExplorerHandlers } from './explorer-handlers.js';
import type { LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { PlainLockTicks } from './plain-lock-ticks.js';
import { SchedulerLockExplorer } from './scheduler-lock.explorer.js';

/** A decorated job as `@nestjs/schedule`'s orchestrator holds it until it mounts it: what its timer or cron calls. */
interface OrchestratorEntry {
  target: () => unknown;
}

/** A decorated interval or timeout as the orchestrator holds it: also its period or delay, ms. */
interface TimerEntry extends OrchestratorEntry {
  timeout: number;
}

/** The parts of `@nestjs/schedule`'s `SchedulerOrchestrator` (6 and 12) that hold and mount decorated jobs. */
interface SchedulerOrchestrator {
  cronJobs: Record<string, OrchestratorEntry>;
  intervals: Record<string, TimerEntry>;
  timeouts: Record<string, TimerEntry>;
  mountCron(): void;
  mountIntervals(): void;
  mountTimeouts(): void;
}

/** A locked decorated interval or timeout, as the orchestrator mounts it. */
export interface MountedTimer {
  readonly job: LockedJob;
  readonly kind: 'interval' | 'timeout';
  /** What its timer calls: the locked tick. */
  readonly tick: () => unknown;
  /** What the tick runs under the lock: the job's handler, without a tick's arguments. */
  readonly handler: () => unknown;
  /** Its period or delay, ms, from the orchestrator: a Node.js timer keeps it only in private fields. */
  readonly timeout: number;
}

/**
 * Hands `@nestjs/schedule`'s `SchedulerOrchestrator`, as it mounts decorated jobs, what a locked job's timer or cron
 * job calls, in place of what the explorer made of the method:
 *
 * - an interval or a timeout gets its locked tick, so its timer runs the job under the lock from its first tick,
 *   whether Node's or a fake one (Jest's, Vitest's): the registry proxy takes the job as it is registered
 *   ({@link takeTimer}), locked already;
 * - a cron job gets a stand-in that only notes that cron fired it: `cron` fires a job inside its constructor when
 *   the first fire time has passed by less than its `threshold` while the job starts (`Missed execution deadline by
 *   4ms … Executing immediately`), or with `runOnInit`, before the registry proxy can lock the job — on every
 *   replica of a rolling deploy at once. The proxy runs that tick under the lock once the job is registered.
 *
 * The handler a locked tick runs is the method as `@nestjs/schedule` wraps it, with whatever instrumentation wraps
 * it there (`@nestjs/observe`), whichever was set up first ({@link ExplorerHandlers}). Mounting happens in the
 * orchestrator's `onApplicationBootstrap`, after every `onModuleInit`: every locked job is known then.
 */
@Injectable()
export class DecoratedJobMounts implements OnModuleInit {
  private readonly fired = new Set<string>();
  /** By job name: the handler of each locked decorated cron job. */
  private readonly cronHandlers = new Map<string, () => unknown>();
  /** The locked timers the orchestrator is mounting now, by kind and name, until the registry proxy takes them. */
  private readonly mounting = new Map<string, MountedTimer>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly jobs: LockedJobRegistry,
    private readonly explorer: SchedulerLockExplorer,
    private readonly handlers: ExplorerHandlers,
    private readonly ticks: PlainLockTicks,
  ) {}

  /** Patched, not done now: locked jobs are all known only once every onModuleInit has run. */
  onModuleInit(): void {
    const orchestrator = this.findOrchestrator();
    const { mountCron, mountIntervals, mountTimeouts } = orchestrator;
    orchestrator.mountCron = () => {
      for (const [jobName, entry] of Object.entries(orchestrator.cronJobs)) {
        const job = this.jobs.find('cron', jobName);
        if (!job) continue;
        this.cronHandlers.set(jobName, this.handlerOf(job, entry));
        entry.target = () => void this.fired.add(jobName);
      }
      mountCron.call(orchestrator);
    };
    orchestrator.mountIntervals = () =>
      this.mountTimers('interval', orchestrator.intervals, () => mountIntervals.call(orchestrator));
    orchestrator.mountTimeouts = () =>
      this.mountTimers('timeout', orchestrator.timeouts, () => mountTimeouts.call(orchestrator));
  }

  /** The handler of the decorated cron job `jobName`, as `@nestjs/schedule` made it; `undefined` for others. */
  cronHandlerOf(jobName: string): (() => unknown) | undefined {
    return this.cronHandlers.get(jobName);
  }

  /** Whether cron fired `jobName` while creating it, since the last call. */
  take(jobName: string): boolean {
    return this.fired.delete(jobName);
  }

  /**
   * The locked decorated timer `name` of `kind` while the orchestrator mounts it, once: the timer the registry is
   * handed now calls its locked tick. `undefined` for any other timer (one the app adds itself).
   */
  takeTimer(kind: 'interval' | 'timeout', name: string): MountedTimer | undefined {
    const mounted = this.mounting.get(`${kind}:${name}`);
    this.mounting.delete(`${kind}:${name}`);
    return mounted;
  }

  private mountTimers(kind: 'interval' | 'timeout', entries: Record<string, TimerEntry>, mount: () => void): void {
    for (const [jobName, entry] of Object.entries(entries)) {
      const job = this.jobs.find(kind, jobName);
      if (!job) continue;
      const handler = this.handlerOf(job, entry);
      const tick = () => this.ticks.run(job, handler);
      entry.target = tick;
      this.mounting.set(`${kind}:${jobName}`, { job, kind, tick, handler, timeout: entry.timeout });
    }
    try {
      mount();
    } finally {
      this.mounting.clear(); // the orchestrator registered each timer as it mounted it
    }
  }

  /** What a locked tick of `job` runs: its method as the explorer makes it, or the explorer's `entry` as it is. */
  private handlerOf(job: LockedJob, entry: OrchestratorEntry): () => Promise<unknown> {
    const method = this.explorer.methodOf(job.jobName);
    // A decorated job without @SchedulerLock, locked by a runtime declaration: its method is not known here.
    return method ? this.handlers.handlerOf(method) : this.handlers.handlerAround(entry.target);
  }

  private findOrchestrator(): SchedulerOrchestrator {
    const wrapper = this.discovery.getProviders().find(({ metatype }) => metatype?.name === 'SchedulerOrchestrator');
    const orchestrator = wrapper?.instance as Partial<SchedulerOrchestrator> | undefined;
    const shape = {
      mountCron: 'function',
      mountIntervals: 'function',
      mountTimeouts: 'function',
      cronJobs: 'object',
      intervals: 'object',
      timeouts: 'object',
    } as const;
    const absent = Object.entries(shape).find(
      ([part, type]) => typeof orchestrator?.[part as keyof typeof shape] !== type,
    );
    const missing = !orchestrator
      ? 'no SchedulerOrchestrator provider'
      : absent && `no SchedulerOrchestrator.${absent[0]}${absent[1] === 'function' ? '()' : ''}`;
    if (missing) {
      throw new SchedulerLockConfigurationError(
        `This version of @nestjs/schedule has ${missing}, which nest-scheduler-lock needs to lock decorated jobs ` +
          'from their first tick (supported: @nestjs/schedule 6 and 12); a locked job could run unlocked at ' +
          'startup, so the app is refused',
      );
    }
    return orchestrator as SchedulerOrchestrator;
  }
}
