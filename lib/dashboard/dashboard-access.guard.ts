import {
  ForbiddenException,
  HttpException,
  Inject,
  Injectable,
  Logger,
  createParamDecorator,
  type CanActivate,
  type ExecutionContext,
} from '@nestjs/common';
import type { DashboardAccess, DashboardSettings } from './dashboard-options.js';

/** Injection token (not exported from the entry point) of the status page's {@link DashboardSettings}. */
export const DASHBOARD_SETTINGS = Symbol('SCHEDULER_LOCK_DASHBOARD_SETTINGS');

/**
 * The header every steering request must carry. A cross-site HTML form cannot set a header, and a cross-site
 * script can only after a CORS preflight the page never answers.
 */
export const STEERING_HEADER = 'x-scheduler-lock';

/** What the guard decided for a request, for the handler. */
const accessOf = new WeakMap<object, DashboardAccess & { readonly readOnly: boolean }>();

/**
 * Every request to the status page passes here first: `authorize` decides who it is (or 403). A request that
 * changes something (any method but GET and HEAD) must also be allowed to steer (not read-only) and come from
 * the page itself: a JSON body, the {@link STEERING_HEADER} header, and, when the browser names an `Origin`,
 * the page's own host or a trusted one.
 */
@Injectable()
export class DashboardAccessGuard implements CanActivate {
  private readonly logger = new Logger('SchedulerLockDashboard');

  constructor(@Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<PlatformRequest>();
    const access = await this.authorized(request);
    const readOnly = this.settings.readOnly || access.readOnly === true;
    if (!['GET', 'HEAD'].includes(request.method.toUpperCase())) {
      if (readOnly) throw new ForbiddenException('The status page is read-only for you: it cannot steer jobs');
      this.checkSameOrigin(request);
    }
    accessOf.set(request, { actor: access.actor, readOnly });
    return true;
  }

  private async authorized(request: PlatformRequest): Promise<DashboardAccess> {
    let access: DashboardAccess | false;
    try {
      access = await this.settings.authorize(request);
    } catch (error) {
      if (error instanceof HttpException) throw error;
      this.logger.warn(`authorize(request) threw, so the request is refused: ${(error as Error)?.message ?? error}`);
      throw new ForbiddenException();
    }
    if (access === false) throw new ForbiddenException();
    if (typeof access?.actor !== 'string' || access.actor.trim() === '') {
      this.logger.warn('authorize(request) returned neither false nor { actor: string }, so the request is refused');
      throw new ForbiddenException();
    }
    return access;
  }

  private checkSameOrigin(request: PlatformRequest): void {
    const header = (name: string): string | undefined => {
      const value = request.headers[name];
      return Array.isArray(value) ? value[0] : value;
    };
    const mediaType = header('content-type')?.split(';')[0].trim().toLowerCase();
    if (mediaType !== 'application/json') {
      throw new ForbiddenException('A steering request needs Content-Type: application/json');
    }
    if (header(STEERING_HEADER) !== '1') {
      throw new ForbiddenException(`A steering request needs the header ${STEERING_HEADER}: 1`);
    }
    const origin = header('origin');
    if (origin === undefined) return;
    const host = header('host')?.toLowerCase();
    const originHost = hostOf(origin);
    if (originHost === undefined || (originHost !== host && !this.settings.trustedHosts.has(originHost))) {
      throw new ForbiddenException(`A steering request from origin ${origin} is refused: not the page's own`);
    }
  }
}

/** The `host[:port]` of an `Origin` header; `undefined` for `null` and other opaque origins. */
function hostOf(origin: string): string | undefined {
  try {
    return new URL(origin).host.toLowerCase() || undefined;
  } catch {
    return undefined;
  }
}

/** What the guard reads of a request; Express's and Fastify's requests both have it. */
interface PlatformRequest {
  readonly method: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** The handler's parameter: who is asking, as the guard let them in. */
export const Access = createParamDecorator((_: unknown, context: ExecutionContext) =>
  accessOf.get(context.switchToHttp().getRequest())!,
);
