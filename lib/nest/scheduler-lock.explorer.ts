import { Inject, Injectable, Logger, type OnModuleInit } from '@nestjs/common';
import { DiscoveryService, MetadataScanner } from '@nestjs/core';
import type { InstanceWrapper } from '@nestjs/core/injector/instance-wrapper.js';
import { formatDuration } from '../core/provider/duration.js';
import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import type { DecoratedMethod } from './explorer-handlers.js';
import { createLockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import { SchedulerLockMetadataAccessor } from './scheduler-lock-metadata.accessor.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/** A method that carries `@SchedulerLock`. */
interface LockedMethod {
  readonly wrapper: InstanceWrapper;
  readonly method: Function;
  readonly methodName: string;
  /** `ClassName.methodName`. */
  readonly source: string;
}

/**
 * Finds the methods with `@SchedulerLock` and records their locks in the {@link LockedJobRegistry}, and which
 * method each decorated job runs.
 */
@Injectable()
export class SchedulerLockExplorer implements OnModuleInit {
  private readonly logger = new Logger('SchedulerLock');
  /** By job name: the method of each decorated locked job, and its instance. */
  private readonly methods = new Map<string, DecoratedMethod>();

  constructor(
    private readonly discovery: DiscoveryService,
    private readonly scanner: MetadataScanner,
    private readonly accessor: SchedulerLockMetadataAccessor,
    private readonly jobs: LockedJobRegistry,
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
  ) {
    // @nestjs/schedule registers an unnamed job under a random UUID, different on every process,
    // and picks that name in its own onModuleInit, whose order relative to ours is not ours to choose.
    // Every constructor runs before any onModuleInit, so unnamed locked jobs get their stable
    // `ClassName.methodName` here.
    this.nameUnnamedJobs();
  }

  onModuleInit(): void {
    for (const locked of this.lockedMethods()) {
      if (!locked.wrapper.isDependencyTreeStatic()) continue; // @nestjs/schedule does not schedule these either
      this.register(locked);
    }
  }

  /** The method the decorated locked job `jobName` runs, with its instance; `undefined` for other jobs. */
  methodOf(jobName: string): DecoratedMethod | undefined {
    return this.methods.get(jobName);
  }

  private nameUnnamedJobs(): void {
    for (const { method, source } of this.lockedMethods()) {
      const kind = this.accessor.getJobKind(method);
      if (kind && !this.accessor.getJobName(method, kind)) this.accessor.setJobName(method, kind, source);
    }
  }

  private register({ wrapper, method, methodName, source }: LockedMethod): void {
    const subject = `@SchedulerLock on ${source}`;
    const kind = this.accessor.getJobKind(method);
    if (!kind) {
      throw new SchedulerLockConfigurationError(
        `${subject}: the method has no @Cron, @Interval or @Timeout, so there is nothing to lock`,
      );
    }
    const jobName = this.accessor.getJobName(method, kind);
    if (!jobName) {
      // Only a provider built by a factory escapes nameUnnamedJobs: its class is unknown until it exists.
      const example = kind === 'cron' ? "Cron(expression, { name: 'my-job' })" : `${capitalize(kind)}('my-job', ms)`;
      throw new SchedulerLockConfigurationError(
        `${subject}: the job has no name and its provider is created by a factory, so it cannot get a stable ` +
          `lock; name the job (for example @${example})`,
      );
    }
    const options = this.accessor.getLockOptions(method)!;
    const { configuration } = this.jobs.add(createLockedJob({ jobName, kind, options, source }, this.settings));
    // The method as @nestjs/schedule reads it, off the instance.
    const instance = wrapper.instance as Record<string, Function>;
    this.methods.set(jobName, { instance, method: instance[methodName] });
    this.logger.log(
      `Locked ${kind} job "${jobName}"${jobName === source ? '' : ` (${source})`}: lock "${configuration.name}", ` +
        `lockAtMostFor ${formatDuration(configuration.lockAtMostFor)}, ` +
        `lockAtLeastFor ${formatDuration(configuration.lockAtLeastFor)}`,
    );
  }

  private *lockedMethods(): Generator<LockedMethod> {
    for (const wrapper of [...this.discovery.getControllers(), ...this.discovery.getProviders()]) {
      const prototype = wrapper.instance ? Object.getPrototypeOf(wrapper.instance) : undefined;
      if (!prototype) continue;
      for (const methodName of this.scanner.getAllMethodNames(prototype)) {
        const method = prototype[methodName];
        if (this.accessor.getLockOptions(method)) {
          yield { wrapper, method, methodName, source: `${prototype.constructor.name}.${methodName}` };
        }
      }
    }
  }
}

function capitalize(text: string): string {
  return text[0].toUpperCase() + text.slice(1);
}
