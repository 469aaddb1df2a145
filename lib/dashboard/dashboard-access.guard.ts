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
import { HttpAdapterHost, Reflector } from '@nestjs/core';
import { quoted } from '../core/provider/message-text.js';
import type { DashboardAccess, DashboardSettings } from './dashboard-options.js';
import {
  checkHost,
  checkSameOrigin,
  checkOperatorActionRequest,
  hostOf,
  type PlatformRequest,
} from './dashboard-request.js';
import { productionNodeEnv } from './open-page-environment.js';

/** Injection token (not exported from the entry point) of the status page's {@link DashboardSettings}. */
export const DASHBOARD_SETTINGS = Symbol('SCHEDULER_LOCK_DASHBOARD_SETTINGS');

/** Marks the route of the page itself, which a link from another site may open (a top-level navigation). */
export const DashboardDocument = Reflector.createDecorator<true>();

/** What the guard decided for a request, for the handler. */
const accessOf = new WeakMap<object, DashboardAccess & { readonly readOnly: boolean }>();

/**
 * Headers of every response of the page's routes, errors included: nothing is cached (a 403 either), and no
 * browser reads a JSON answer as anything else.
 */
const RESPONSE_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;
/** What an app's CORS setting (`enableCors`) may have added: no other origin may read the page's answers. */
const CORS_HEADERS = [
  'Access-Control-Allow-Origin',
  'Access-Control-Allow-Credentials',
  'Access-Control-Expose-Headers',
];

/**
 * Every request to the status page passes here first: it gets the {@link RESPONSE_HEADERS} and loses any CORS
 * header; its `Host` must be one the page answers (see `checkHost`); a page of another origin or site is refused
 * (see `checkSameOrigin`); an open page (`dangerouslyAllowEveryone`) refuses everything once `NODE_ENV` counts as
 * production; `authorize` decides who it is (or 403). A request that changes something (any method but GET and
 * HEAD) must also be allowed to steer (not read-only) and look like the page's own (see `checkOperatorActionRequest`).
 */
@Injectable()
export class DashboardAccessGuard implements CanActivate {
  private readonly logger = new Logger('SchedulerLockDashboard');
  /** The open page has logged that it closed because of `NODE_ENV`: once is enough. */
  private closedLogged = false;

  constructor(
    @Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings,
    private readonly adapterHost: HttpAdapterHost,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    // Set before anything can fail, so that an error response has them too.
    const response = http.getResponse<{ removeHeader(name: string): unknown }>();
    for (const [name, value] of Object.entries(RESPONSE_HEADERS)) {
      this.adapterHost.httpAdapter.setHeader(response, name, value);
    }
    for (const name of CORS_HEADERS) response.removeHeader(name);
    if (this.settings.open) this.checkNotProduction();
    const host = hostOf(request);
    checkHost(request, host, this.settings);
    const isDocument = this.reflector.get(DashboardDocument, context.getHandler()) === true;
    checkSameOrigin(request, host, this.settings, isDocument);
    const access = await this.authorized(request);
    // Fails closed: a `readOnly` of 'true', 1 or 'false' (JWT claims, environment variables) is read-only.
    const readOnly = this.settings.readOnly || (access.readOnly !== undefined && access.readOnly !== false);
    if (!['GET', 'HEAD'].includes(request.method.toUpperCase())) {
      if (readOnly) throw new ForbiddenException('The status page is read-only for you: it cannot steer jobs');
      checkOperatorActionRequest(request);
    }
    accessOf.set(request, { actor: access.actor, readOnly });
    return true;
  }

  /** The open page closes when `NODE_ENV` turns production after startup: a security switch fails closed. */
  private checkNotProduction(): void {
    const nodeEnv = productionNodeEnv(this.settings.environment);
    if (nodeEnv === undefined) return;
    if (!this.closedLogged) {
      this.closedLogged = true;
      this.logger.warn(
        'The open status page (dangerouslyAllowEveryone) refuses every request: ' +
          `NODE_ENV is ${quoted(nodeEnv)}, which counts as production`,
      );
    }
    throw new ForbiddenException('The status page is closed');
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
}

/** The handler's parameter: who is asking, as the guard let them in. */
export const Access = createParamDecorator((_: unknown, context: ExecutionContext) =>
  accessOf.get(context.switchToHttp().getRequest())!,
);
