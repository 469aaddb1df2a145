import {
  SchedulerLockConfigurationError,
  assertKnownOptions,
  booleanOption,
} from '../core/provider/lock-configuration.js';
import { quoted } from '../core/provider/message-text.js';
import {
  DEFAULT_DASHBOARD_PATH,
  SUBJECT,
  checkedHosts,
  checkedOrigins,
  checkedPath,
} from './dashboard-option-checks.js';
import type { HostAndPort } from './host-header.js';
import { productionNodeEnv } from './open-page-environment.js';

/** Who is looking at the status page, as `authorize` says. */
export interface DashboardAccess {
  /** Who they are: recorded as the actor of each pause, resume, trigger and unlock they do. */
  readonly actor: string;
  /**
   * `true`: they may look but not steer (the page hides the buttons; the POST endpoints answer 403). Fails
   * closed: anything but `false` or absent (`'true'`, `1`, `'false'`) counts as read-only.
   */
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
  /**
   * Where the page is served; its JSON endpoints are under `<path>/api/`. Default `/scheduler-lock`. One or more
   * segments of letters, digits and `. _ ~ -`, none of them `.` or `..`, each after one `/`.
   */
  readonly path?: string;
  /** Who may use the page; required unless {@link dangerouslyAllowEveryone}. */
  readonly authorize?: DashboardAuthorize<TRequest>;
  /**
   * `true`: everyone who reaches the app's port may see **and steer** every locked job, as actor
   * `anonymous`. For a developer's machine only: refused unless `NODE_ENV` is `development`, `test` or unset
   * (any other value counts as production) when `forRoot()` runs, when the app starts and at each request;
   * logged as a warning at startup. Answered only to requests whose `Host` is a loopback name (`localhost`,
   * `127.0.0.1`, `[::1]`), which closes DNS rebinding, and that no proxy forwarded, or to a host of
   * {@link allowedHosts} or {@link trustedOrigins}. Cannot be combined with `authorize`.
   */
  readonly dangerouslyAllowEveryone?: boolean;
  /**
   * `true`: nobody can steer through the page (no buttons; pause / resume / trigger / unlock answer 403). Must be
   * a boolean: anything else fails the startup.
   */
  readonly readOnly?: boolean;
  /**
   * Origins (`https://ops.example.com`: scheme, host and port) besides the page's own whose pages may POST the
   * operator actions: for a reverse proxy that rewrites the `Host` header or ends TLS. Written as a browser sends
   * them: lower case, without a default port or a trailing `/`. Default none.
   */
  readonly trustedOrigins?: readonly string[];
  /**
   * The `Host` names the page answers besides loopback names (`localhost`, `127.0.0.1`, `[::1]`) and the hosts of
   * {@link trustedOrigins}: `devbox.lan` (any port), `devbox.lan:8080` (that port only), `10.0.0.5`, `[fd00::5]`.
   * Default: any host, or loopback names only under {@link dangerouslyAllowEveryone}. Under it, a request a proxy
   * forwarded (`Forwarded`, `X-Forwarded-*`, `X-Real-IP`, `Via`) is answered only at a host listed here.
   */
  readonly allowedHosts?: readonly string[];
}

/** The actor of every request under {@link SchedulerLockDashboardOptions.dangerouslyAllowEveryone}. */
export const ANONYMOUS_ACTOR = 'anonymous';

/** The checked options (not exported from the entry point). */
export interface DashboardSettings {
  readonly path: string;
  readonly authorize: DashboardAuthorize;
  /** The opt-out is on: the page is open to everyone. */
  readonly open: boolean;
  readonly readOnly: boolean;
  /** Origins (`scheme://host[:port]`, as `URL.origin` writes them) besides the request's own that may use the page. */
  readonly trustedOrigins: ReadonlySet<string>;
  /** The hosts the page answers besides loopback names: `allowedHosts` and the trusted origins' hosts. */
  readonly listedHosts: readonly HostAndPort[];
  /** It answers any `Host` too: a page behind `authorize` without `allowedHosts`. */
  readonly answersAnyHost: boolean;
  /** Where `NODE_ENV` is read, again at startup and at each request of an open page. */
  readonly environment: NodeJS.ProcessEnv;
}

/** Every option of {@link SchedulerLockDashboardOptions}: any other key is a typo that would be ignored. */
const DASHBOARD_OPTIONS: readonly (keyof SchedulerLockDashboardOptions)[] = [
  'path',
  'authorize',
  'dangerouslyAllowEveryone',
  'readOnly',
  'trustedOrigins',
  'allowedHosts',
];

/** Checks the options; a {@link SchedulerLockConfigurationError} when the page would be open by mistake. */
export function createDashboardSettings<TRequest>(
  options: SchedulerLockDashboardOptions<TRequest> = {},
  environment: NodeJS.ProcessEnv = process.env,
): DashboardSettings {
  if (typeof options !== 'object' || options === null) {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: expected an options object, got ${quoted(options)}`);
  }
  assertKnownOptions(options, DASHBOARD_OPTIONS, SUBJECT);
  const { authorize } = options;
  const dangerouslyAllowEveryone = booleanOption(
    options.dangerouslyAllowEveryone,
    false,
    'dangerouslyAllowEveryone',
    SUBJECT,
  );
  if (authorize !== undefined && typeof authorize !== 'function') {
    throw new SchedulerLockConfigurationError(`${SUBJECT}: authorize must be a function, got ${typeof authorize}`);
  }
  if (authorize && dangerouslyAllowEveryone) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: authorize and dangerouslyAllowEveryone exclude each other; drop dangerouslyAllowEveryone`,
    );
  }
  if (!authorize && !dangerouslyAllowEveryone) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: an authorize(request) callback is required, it decides who may see and steer the jobs ` +
        '(or dangerouslyAllowEveryone: true, on a developer machine only)',
    );
  }
  if (dangerouslyAllowEveryone) assertNotProduction(environment);
  const trustedOrigins = checkedOrigins(options.trustedOrigins);
  const allowedHosts = checkedHosts(options.allowedHosts);
  return {
    path: checkedPath(options.path === undefined ? DEFAULT_DASHBOARD_PATH : options.path),
    authorize: (authorize as DashboardAuthorize | undefined) ?? (() => ({ actor: ANONYMOUS_ACTOR })),
    open: !authorize,
    readOnly: booleanOption(options.readOnly, false, 'readOnly', SUBJECT),
    trustedOrigins: new Set(trustedOrigins.map((origin) => origin.origin)),
    listedHosts: [...(allowedHosts ?? []), ...trustedOrigins.map((trusted) => trusted.host)],
    answersAnyHost: !!authorize && allowedHosts === undefined,
    environment,
  };
}

/** Throws when `NODE_ENV` counts as production: the open page is for a developer machine only. */
export function assertNotProduction(environment: NodeJS.ProcessEnv): void {
  const nodeEnv = productionNodeEnv(environment);
  if (nodeEnv === undefined) return;
  throw new SchedulerLockConfigurationError(
    `${SUBJECT}: dangerouslyAllowEveryone is refused when NODE_ENV is ${quoted(nodeEnv)} (anything but ` +
      'development, test or unset counts as production); give an authorize(request) callback',
  );
}
