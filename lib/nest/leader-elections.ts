import { Inject, Injectable, Logger } from '@nestjs/common';
import { DiscoveryService, Reflector } from '@nestjs/core';
import { LockingTaskExecutor } from '../core/executor/locking-task-executor.js';
import { DEFAULT_LEASE, SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { canRenewLeases } from '../core/provider/provider-abilities.js';
import { describeProvider } from '../core/provider/provider-checks.js';
import { LeaderCampaign, type LeadershipHooks } from '../leader/leader-campaign.js';
import type { LeaderLease } from '../leader/leader-lease.js';
import type { LockedJob } from './locked-job.js';
import { LockedJobRegistry } from './locked-job.registry.js';
import { LEADER_ELECTION, type LeaderElectionDefinition } from './leader-election.decorator.js';
import { SCHEDULER_LOCK_SETTINGS } from './scheduler-lock.constants.js';
import type { SchedulerLockSettings } from './scheduler-lock.settings.js';

/**
 * This node's part in the elections of its `@LeaderElection()` providers: which ones it leads, and an operator
 * action to make it step down. The module starts them once the app has started and ends them first on shutdown.
 */
@Injectable()
export class LeaderElections {
  private readonly campaigns = new Map<string, LeaderCampaign>();
  private readonly logger = new Logger('SchedulerLock');
  /** Shut down or halted: a job declared now joins no election. */
  private stopped = false;

  constructor(
    @Inject(SCHEDULER_LOCK_SETTINGS) private readonly settings: SchedulerLockSettings,
    private readonly executor: LockingTaskExecutor,
    private readonly discovery: DiscoveryService,
    private readonly reflector: Reflector,
    private readonly jobs: LockedJobRegistry,
  ) {}

  /** The names of the elections this node takes part in. */
  names(): string[] {
    return [...this.campaigns.keys()];
  }

  /** The current term's lease while this node leads `election`; `null` while it follows or does not take part. */
  lease(election: string): LeaderLease | null {
    return this.campaigns.get(election)?.leading ?? null;
  }

  /** The elections this node leads now. */
  led(): string[] {
    return this.names().filter((election) => this.isLeader(election));
  }

  /** Whether this node leads `election` now. */
  isLeader(election: string): boolean {
    return this.lease(election) !== null;
  }

  /**
   * An operator action: if this node leads `election`, its term ends (`stepped-down`) and its lease is released,
   * and it waits a renewal interval before trying again. Resolves to whether it was leading.
   */
  stepDown(election: string): Promise<boolean> {
    return this.campaigns.get(election)?.stepDown('stepped-down') ?? Promise.resolve(false);
  }

  /**
   * @internal Finds the `@LeaderElection()` providers, and the elections locked jobs run on, and starts their
   * campaigns.
   */
  start(): void {
    for (const wrapper of this.discovery.getProviders()) {
      const definition = wrapper.metatype
        ? this.reflector.get<LeaderElectionDefinition | undefined>(LEADER_ELECTION, wrapper.metatype)
        : undefined;
      if (!definition || !wrapper.instance) continue;
      const { election, lease } = definition;
      const subject = `@LeaderElection("${election}")`;
      if (this.campaigns.has(election)) {
        throw new SchedulerLockConfigurationError(`${subject}: two providers take part in it`);
      }
      this.join(election, lease, wrapper.instance as LeadershipHooks, subject);
    }
    for (const job of this.jobs.all()) this.joinFor(job);
    for (const campaign of this.campaigns.values()) campaign.start();
    // A runtime job declared later, on an election this node is not in yet: it would otherwise never run.
    this.jobs.onAdded((job) => {
      if (!this.stopped) this.joinFor(job)?.start();
    });
  }

  /** For a job on the leader of an election no provider takes part in: this node runs for it, with no hooks. */
  private joinFor(job: LockedJob): LeaderCampaign | undefined {
    if (job.leader === null || this.campaigns.has(job.leader)) return undefined;
    return this.join(job.leader, DEFAULT_LEASE, {}, job.source);
  }

  private join(election: string, lease: number, hooks: LeadershipHooks, subject: string): LeaderCampaign {
    const { provider, node } = this.settings;
    if (!canRenewLeases(provider)) {
      throw new SchedulerLockConfigurationError(
        `${subject}: an election needs a provider with renewLeases(), which provider ` +
          `${describeProvider(provider)} does not have`,
      );
    }
    const campaign = new LeaderCampaign(election, node, lease, hooks, provider, this.executor, this.logger);
    this.campaigns.set(election, campaign);
    return campaign;
  }

  /** @internal A clean shutdown: every term this node holds ends (`shutdown`) and its lease is released. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.campaigns.values()].map((campaign) => campaign.stop()));
  }

  /** @internal As a killed process: no hook, no release; the leases expire in the store. */
  halt(): void {
    this.stopped = true;
    for (const campaign of this.campaigns.values()) campaign.halt();
  }
}
