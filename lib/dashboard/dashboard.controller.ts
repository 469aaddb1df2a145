import {
  BadRequestException,
  Body,
  Get,
  Header,
  HttpCode,
  Inject,
  NotFoundException,
  Param,
  Post,
  Query,
  ServiceUnavailableException,
  UseGuards,
} from '@nestjs/common';
import { LockProviderUnavailableError } from '../core/provider/errors.js';
import type { OperatorAction } from '../core/task/lock-events.js';
import type { ClusterNode, HistoryEntry, HistoryOutcome } from '../operators/cluster-records.js';
import type { ElectionOverview, StepDownOutcome } from '../operators/election-admin.js';
import type { JobOverview } from '../operators/job-overview.js';
import type { ClusterJobHealth } from '../operators/job-health.js';
import { SchedulerLockAdmin } from '../nest/scheduler-lock-admin.js';
import { UnknownJobError } from '../operators/cluster-admin.js';
import { InvalidOperatorNoteError } from '../operators/operator-note.js';
import { Access, DASHBOARD_SETTINGS, DashboardAccessGuard, DashboardDocument } from './dashboard-access.guard.js';
import type { DashboardAccess, DashboardSettings } from './dashboard-options.js';
import { DASHBOARD_PAGE } from './dashboard-page.js';

/** How many recent runs of each job `GET api/jobs` sends, for the page's run-time chart. */
const CHART_RUNS = 30;
const OPERATOR_ACTIONS: readonly OperatorAction[] = ['pause', 'resume', 'trigger', 'unlock'];

/** A finished (or crashed) run, as the run-time chart draws it. */
export interface DashboardRun {
  readonly startedAt: Date;
  readonly durationMs: number | null;
  readonly outcome: HistoryOutcome;
  readonly node: string;
  /** Who asked for it, for a run an operator triggered. */
  readonly manualActor: string | null;
}

/** A job as `GET <path>/api/jobs` sends it: its overview and its recent runs, newest first. */
export interface DashboardJob extends JobOverview {
  readonly recentRuns: readonly DashboardRun[];
  /** Its health, cluster-wide: state, last success, missed occurrences. */
  readonly health: ClusterJobHealth | null;
}

/**
 * The status page and its JSON endpoints, under the configured path (see `SchedulerLockDashboardModule`, which
 * mounts a subclass of this one there). Every route passes {@link DashboardAccessGuard} first, which also sets
 * `Cache-Control: no-store` and `X-Content-Type-Options: nosniff` on every response, errors included.
 */
@UseGuards(DashboardAccessGuard)
export class DashboardController {
  constructor(
    private readonly admin: SchedulerLockAdmin,
    @Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings,
  ) {}

  /** The page: one HTML document, its script and style inline, allowed to load nothing from elsewhere. */
  @Get()
  @DashboardDocument(true)
  @Header('Content-Type', 'text/html; charset=utf-8')
  @Header('Content-Security-Policy', DASHBOARD_PAGE.contentSecurityPolicy)
  @Header('X-Frame-Options', 'DENY')
  @Header('Referrer-Policy', 'no-referrer')
  page(): string {
    return DASHBOARD_PAGE.html;
  }

  /** Who is looking, and whether they may steer. */
  @Get('api/session')
  session(@Access() access: Required<DashboardAccess>): { actor: string; readOnly: boolean; open: boolean } {
    return { actor: access.actor, readOnly: access.readOnly, open: this.settings.open };
  }

  /** Every locked job a live node runs, with its recent runs; `at` is the server's clock. */
  @Get('api/jobs')
  async jobs(): Promise<{ at: Date; jobs: DashboardJob[] }> {
    return answered(async () => {
      const [jobs, healths] = await Promise.all([this.admin.listJobs(), this.admin.listHealth()]);
      const runs = await Promise.all(jobs.map((job) => this.recentRuns(job.jobName)));
      const health = (name: string) => healths.find((each) => each.jobName === name) ?? null;
      return {
        at: new Date(),
        jobs: jobs.map((job, index) => ({ ...job, recentRuns: runs[index], health: health(job.jobName) })),
      };
    });
  }

  /** A job's last `limit` (default 50, at most 1000) runs and operator actions, newest first. */
  @Get('api/jobs/:name/history')
  async history(@Param('name') name: string, @Query('limit') limit?: string): Promise<HistoryEntry[]> {
    const count = limit === undefined ? 50 : Number(limit);
    if (!Number.isInteger(count) || count < 1 || count > 1000)
      throw new BadRequestException('limit must be a whole number from 1 to 1000');
    return answered(() => this.admin.history(name, count));
  }

  /** The nodes whose heartbeat is recent. */
  @Get('api/nodes')
  async nodes(): Promise<{ at: Date; nodes: ClusterNode[] }> {
    return answered(async () => ({ at: new Date(), nodes: await this.admin.listNodes() }));
  }

  /** Every election a live node takes part in: its leader, term and since when; `at` is the server's clock. */
  @Get('api/elections')
  async elections(): Promise<{ at: number; elections: ElectionOverview[] }> {
    return answered(async () => ({ at: Date.now(), elections: await this.admin.listElections() }));
  }

  /** An election's leader, term and since when. */
  @Get('api/elections/:name')
  async election(@Param('name') name: string): Promise<ElectionOverview> {
    return answered(() => this.admin.election(name));
  }

  /** Makes an election's leader step down as the request's actor; body `{ "reason": "…" }` (optional). */
  @Post('api/elections/:name/step-down')
  @HttpCode(200)
  async stepDown(
    @Param('name') name: string,
    @Body() body: unknown,
    @Access() access: Required<DashboardAccess>,
  ): Promise<StepDownOutcome> {
    const reason = (body as { reason?: unknown } | undefined)?.reason;
    return answered(() => this.admin.stepDown(name, { actor: access.actor, reason: (reason || undefined) as string }));
  }

  /** Pauses, resumes, triggers or unlocks a job as the request's actor; body `{ "reason": "…" }` (optional). */
  @Post('api/jobs/:name/:action')
  @HttpCode(200)
  async steer(
    @Param('name') name: string,
    @Param('action') action: string,
    @Body() body: unknown,
    @Access() access: Required<DashboardAccess>,
  ): Promise<{ action: OperatorAction; job: string; result: unknown }> {
    if (!OPERATOR_ACTIONS.includes(action as OperatorAction)) {
      throw new NotFoundException(`No action "${action}": one of ${OPERATOR_ACTIONS.join(', ')}`);
    }
    // The admin checks the note (InvalidOperatorNoteError, a 400), its reason's type too.
    const reason = (body as { reason?: unknown } | undefined)?.reason;
    const note = { actor: access.actor, reason: (reason || undefined) as string | undefined };
    const result = await answered((): Promise<unknown> => this.admin[action as OperatorAction](name, note));
    return { action: action as OperatorAction, job: name, result };
  }

  private async recentRuns(name: string): Promise<DashboardRun[]> {
    const entries = await this.admin.history(name, CHART_RUNS);
    return entries.flatMap((entry) =>
      entry.type === 'run'
        ? [
            {
              startedAt: entry.startedAt,
              durationMs: entry.durationMs,
              outcome: entry.outcome,
              node: entry.node,
              manualActor: entry.manual?.actor ?? null,
            },
          ]
        : [],
    );
  }
}

/** The admin call's result; its known failures as HTTP errors (bad note 400, unknown job 404, store down 503). */
async function answered<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (error instanceof InvalidOperatorNoteError) throw new BadRequestException(error.message);
    if (error instanceof UnknownJobError) throw new NotFoundException(error.message);
    if (error instanceof LockProviderUnavailableError) throw new ServiceUnavailableException(error.message);
    throw error;
  }
}
