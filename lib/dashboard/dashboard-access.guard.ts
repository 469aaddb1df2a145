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
import { HttpAdapterHost } from '@nestjs/core';
import { quoted } from '../core/provider/message-text.js';
import type { DashboardAccess, DashboardSettings } from './dashboard-options.js';
import { productionNodeEnv } from './open-page-environment.js';

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
 * Headers of every response of the page's routes, errors included: nothing is cached (a 403 either), and no
 * browser reads a JSON answer as anything else.
 */
const RESPONSE_HEADERS = { 'Cache-Control': 'no-store', 'X-Content-Type-Options': 'nosniff' } as const;

/**
 * Every request to the status page passes here first: it gets the {@link RESPONSE_HEADERS}; an open page
 * (`dangerouslyAllowEveryone`) answers a loopback or trusted `Host` only, and nothing once `NODE_ENV` counts as
 * production; `authorize` decides who it is (or 403). A request that changes something (any method but GET and
 * HEAD) must also be allowed to steer (not read-only) and come from the page itself: a JSON body, the
 * {@link STEERING_HEADER} header, and, when the browser names an `Origin`, the page's own (scheme, host and port)
 * or a trusted one.
 */
@Injectable()
export class DashboardAccessGuard implements CanActivate {
  private readonly logger = new Logger('SchedulerLockDashboard');
  /** The open page has logged that it closed because of `NODE_ENV`: once is enough. */
  private closedLogged = false;

  constructor(
    @Inject(DASHBOARD_SETTINGS) private readonly settings: DashboardSettings,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const request = http.getRequest<PlatformRequest>();
    // Set before anything can fail, so that an error response has them too.
    for (const [name, value] of Object.entries(RESPONSE_HEADERS)) {
      this.adapterHost.httpAdapter.setHeader(http.getResponse(), name, value);
    }
    if (this.settings.open) this.checkNotProduction();
    if (this.settings.open) this.checkOpenPageHost(request);
    const access = await this.authorized(request);
    // Fails closed: a `readOnly` of 'true', 1 or 'false' (JWT claims, environment variables) is read-only.
    const readOnly = this.settings.readOnly || (access.readOnly !== undefined && access.readOnly !== false);
    if (!['GET', 'HEAD'].includes(request.method.toUpperCase())) {
      if (readOnly) throw new ForbiddenException('The status page is read-only for you: it cannot steer jobs');
      this.checkSameOrigin(request);
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
    const own = originOf(`${request.protocol}://${header('host')}`);
    const from = originOf(origin);
    if (from === undefined || (from !== own && !this.settings.trustedOrigins.has(from))) {
      throw new ForbiddenException(`A steering request from origin ${origin} is refused: not the page's own`);
    }
  }

  /**
   * An open page answers only requests to a loopback name or a trusted origin's host: a page elsewhere that
   * rebinds its own name to this machine's address (DNS rebinding) sends its own name as `Host`.
   */
  private checkOpenPageHost(request: PlatformRequest): void {
    const host = request.headers.host;
    const url = typeof host === 'string' && URL.canParse(`http://${host}`) ? new URL(`http://${host}`) : undefined;
    if (url && (isLoopback(url.hostname) || this.settings.trustedHosts.has(url.host))) return;
    throw new ForbiddenException(
      'The status page under dangerouslyAllowEveryone answers requests to localhost, 127.0.0.1, [::1] or a ' +
        'trusted origin only',
    );
  }
}

/** `scheme://host[:port]` of a URL (the default port left out); `undefined` for `null` and other opaque origins. */
function originOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { origin } = new URL(url);
  return origin === 'null' ? undefined : origin;
}

/** `localhost`, a name under `.localhost`, 127.0.0.0/8 or `[::1]`. */
function isLoopback(hostname: string): boolean {
  return /^(localhost|.+\.localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(hostname.toLowerCase());
}

/** What the guard reads of a request; Express's and Fastify's requests both have it. */
interface PlatformRequest {
  readonly method: string;
  /** `http` or `https` (behind a proxy, as the platform's trust-proxy setting makes it). */
  readonly protocol: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/** The handler's parameter: who is asking, as the guard let them in. */
export const Access = createParamDecorator((_: unknown, context: ExecutionContext) =>
  accessOf.get(context.switchToHttp().getRequest())!,
);
