import { Injectable, type INestApplication, type Provider } from '@nestjs/common';
import type { AbstractHttpAdapter } from '@nestjs/core';
import { ExpressAdapter } from '@nestjs/platform-express';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { Cron, ScheduleModule } from '@nestjs/schedule';
import { Test } from '@nestjs/testing';
import { LockEvents, SchedulerLock, SchedulerLockAdmin, SchedulerLockModule } from '../../lib/index.js';
import { SchedulerLockDashboardModule, type SchedulerLockDashboardOptions } from '../../lib/dashboard/index.js';
import { CapturedLogger } from '../support/captured-logger.js';
import { waitUntil, type Deferred } from '../support/wait-until.js';

/** The locked job of the dashboard apps: its cron never fires during a test, so it runs only when triggered. */
export const REPORT_JOB = 'yearly-report';

/** The app's one locked job; a test holds its run in flight by setting {@link hold}. */
@Injectable()
export class ReportJob {
  runs = 0;
  hold: Deferred | undefined;

  @Cron('0 0 0 1 1 *', { name: REPORT_JOB })
  @SchedulerLock()
  async run(): Promise<void> {
    this.runs += 1;
    await this.hold?.promise;
  }
}

/** The locked job that ticks every second, in the apps started with `withTickingJob`. */
export const TICKING_JOB = 'inventory-sync';

/** A job whose ticks a test watches; a test holds its run in flight (and so its lock) by setting {@link hold}. */
@Injectable()
export class TickingJob {
  hold: Deferred | undefined;

  @Cron('* * * * * *', { name: TICKING_JOB })
  @SchedulerLock()
  async run(): Promise<void> {
    await this.hold?.promise;
  }
}

/** The HTTP platforms the status page is tested on. */
export const PLATFORMS = ['express', 'fastify'] as const;
export type Platform = (typeof PLATFORMS)[number];

export function adapterOf(platform: Platform): AbstractHttpAdapter {
  return platform === 'express' ? new ExpressAdapter() : new FastifyAdapter();
}

/** A started HTTP app with the status page. */
export interface DashboardApp {
  readonly app: INestApplication;
  /** The page's URL, e.g. `http://127.0.0.1:40123/scheduler-lock`. */
  readonly pageUrl: string;
  /** `scheme://host:port` of the app. */
  readonly origin: string;
  readonly admin: SchedulerLockAdmin;
  readonly job: ReportJob;
  /** The ticking job, when started `withTickingJob`. */
  readonly tickingJob: TickingJob | undefined;
  /** This node's lock events. */
  readonly lockEvents: LockEvents;
  readonly logs: CapturedLogger;
  /** This node's `node`. */
  readonly node: string;
}

/**
/** How {@link startDashboardApp} starts the app. */
export interface DashboardAppOptions {
  /** The HTTP platform; default `express`. */
  readonly platform?: Platform;
  /** `true`: the app also runs {@link TickingJob}. */
  readonly withTickingJob?: boolean;
  /** More providers of the app, such as a `@LeaderElection()` one. */
  readonly providers?: readonly Provider[];
}

/**
 * Starts a Nest app on a free port of 127.0.0.1: `ScheduleModule`, `SchedulerLockModule` on the shared Redis
 * under `keyPrefix` (heartbeat every 200 ms), {@link ReportJob} (and {@link TickingJob} when asked) and the
 * status page with `dashboard`. Resolves once the node has published its jobs, so the page lists them. Close it
 * with `app.close()`.
 */
export async function startDashboardApp<TRequest>(
  keyPrefix: string,
  dashboard: SchedulerLockDashboardOptions<TRequest>,
  { platform = 'express', withTickingJob = false, providers = [] }: DashboardAppOptions = {},
): Promise<DashboardApp> {
  const logs = new CapturedLogger();
  const node = `dashboard-node-${keyPrefix.slice(-8)}`;
  const moduleRef = await Test.createTestingModule({
    imports: [
      ScheduleModule.forRoot(),
      SchedulerLockModule.forRoot({
        redis: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
        keyPrefix,
        node,
        defaultLockAtMostFor: '1m',
        heartbeatInterval: '200ms',
      }),
      SchedulerLockDashboardModule.forRoot(dashboard),
    ],
    providers: [...(withTickingJob ? [ReportJob, TickingJob] : [ReportJob]), ...providers],
  })
    .setLogger(logs)
    .compile();
  const app = moduleRef.createNestApplication(adapterOf(platform), { logger: logs });
  await app.listen(0, '127.0.0.1');
  const origin = await app.getUrl();
  const admin = app.get(SchedulerLockAdmin);
  const published = withTickingJob ? [REPORT_JOB, TICKING_JOB] : [REPORT_JOB];
  await waitUntil(
    async () => {
      const names = (await admin.listJobs()).map((job) => job.jobName);
      return published.every((name) => names.includes(name));
    },
    `the node has published ${published.join(' and ')}`,
  );
  const path = dashboard.path ?? '/scheduler-lock';
  return {
    app,
    pageUrl: origin + path,
    origin,
    admin,
    job: app.get(ReportJob),
    tickingJob: withTickingJob ? app.get(TickingJob) : undefined,
    lockEvents: app.get(LockEvents),
    logs,
    node,
  };
}
