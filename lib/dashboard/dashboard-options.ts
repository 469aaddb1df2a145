import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';

/** Who is looking at the status page, as `authorize` says. */
export interface DashboardAccess {
  /** Who they are: recorded as the actor of each pause, resume, trigger and unlock they do. */
  readonly actor: string;
  /** `true`: they may look but not steer (the page hides the buttons; the POST endpoints answer 403). */
  readonly readOnly?: boolean;
}

/**
 * Decides who may open the status page and its endpoints; called on every request, before anything is read
 * from Redis. `request` is the HTTP platform's request object (Express's `Request` with
 * `@nestjs/platform-express`, Fastify's `FastifyRequest` with `@nestjs/platform-fastify`): read its session,
 * cookie or `Authorization` header.
 *
 * - resolves to a {@link DashboardAccess}: allowed, as `actor`;
 * - resolves to `false`: **403**;
 * - throws a Nest `HttpException` (e.g. `UnauthorizedException` with a `WWW-Authenticate` header): that
 *   response, as it is;
 * - throws anything else: **403**, and the error is logged (a bug in `authorize` never opens the page).
 */
export type DashboardAuthorize<TRequest = unknown> = (
  request: TRequest,
) => DashboardAccess | false | Promise<DashboardAccess | false>;

/** `SchedulerLockDashboardModule.forRoot()` options. */
export interface SchedulerLockDashboardOptions<TRequest = unknown> {
  /** Where the page is served; its JSON endpoints are under `<path>/api/`. Default `/scheduler-lock`. */
  readonly path?: string;
  /** Who may use the page; required unless {@link dangerouslyAllowEveryone}. */
  readonly authorize?: DashboardAuthorize<TRequest>;
  /**
   * `true`: everyone who reaches the app's port may see **and steer** every locked job, as actor
   * `anonymous`. For a developer's machine only: refused when `NODE_ENV` is `production`, and logged as a
   * warning at startup. Cannot be combined with `authorize`.
   */
  readonly dangerouslyAllowEveryone?: boolean;
  /** `true`: nobody can steer through the page (no buttons; pause / resume / trigger / unlock answer 403). */
  readonly readOnly?: boolean;
  /**
   * Origins (`https://ops.example.com`) besides the page's own host whose pages may POST the steering actions:
   * for a reverse proxy that rewrites the `Host` header. Default none.
   */
  readonly trustedOrigins?: readonly string[];
}

/** The default {@link SchedulerLockDashboardOptions.path}. */
export const DEFAULT_DASHBOARD_PATH = '/scheduler-lock';

/** The actor of every request under {@link SchedulerLockDashboardOptions.dangerouslyAllowEveryone}. */
export const ANONYMOUS_ACTOR = 'anonymous';

/** The checked options (not exported from the entry point). */
export interface DashboardSettings {
  readonly path: string;
  readonly authorize: DashboardAuthorize;
  /** The opt-out is on: the page is open to everyone. */
  readonly open: boolean;
  readonly readOnly: boolean;
  /** Hosts (`host[:port]`, lower-case) other than the request's own whose pages may steer. */
  readonly trustedHosts: ReadonlySet<string>;
}

/** Checks the options; a {@link SchedulerLockConfigurationError} when the page would be open by mistake. */
export function createDashboardSettings<TRequest>(
  options: SchedulerLockDashboardOptions<TRequest> = {},
  environment: NodeJS.ProcessEnv = process.env,
): DashboardSettings {
  const { authorize, dangerouslyAllowEveryone = false, readOnly = false } = options;
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new SchedulerLockConfigurationError(`Status page: authorize must be a function, got ${typeof authorize}`);
  }
  if (authorize && dangerouslyAllowEveryone) {
    throw new SchedulerLockConfigurationError(
      'Status page: authorize and dangerouslyAllowEveryone exclude each other; drop dangerouslyAllowEveryone',
    );
  }
  if (!authorize && dangerouslyAllowEveryone !== true) {
    throw new SchedulerLockConfigurationError(
      'Status page: an authorize(request) callback is required, it decides who may see and steer the jobs ' +
        '(or dangerouslyAllowEveryone: true, on a developer machine only)',
    );
  }
  if (dangerouslyAllowEveryone && environment.NODE_ENV === 'production') {
    throw new SchedulerLockConfigurationError(
      'Status page: dangerouslyAllowEveryone is refused when NODE_ENV is production; ' +
        'give an authorize(request) callback',
    );
  }
  return {
    path: checkedPath(options.path ?? DEFAULT_DASHBOARD_PATH),
    authorize: (authorize as DashboardAuthorize | undefined) ?? (() => ({ actor: ANONYMOUS_ACTOR })),
    open: !authorize,
    readOnly: readOnly === true,
    trustedHosts: new Set((options.trustedOrigins ?? []).map(originHost)),
  };
}

function checkedPath(path: string): string {
  if (typeof path !== 'string' || !/^\/?[A-Za-z0-9._~\-/]*$/.test(path) || path.includes('//')) {
    throw new SchedulerLockConfigurationError(
      `Status page: path must be a plain URL path such as ${DEFAULT_DASHBOARD_PATH}, got ${JSON.stringify(path)}`,
    );
  }
  return path;
}

/** The `host[:port]` of an origin such as `https://ops.example.com`. */
function originHost(origin: string): string {
  try {
    return new URL(origin).host.toLowerCase();
  } catch {
    throw new SchedulerLockConfigurationError(
      `Status page: trustedOrigins must be origins such as https://ops.example.com, got ${JSON.stringify(origin)}`,
    );
  }
}
