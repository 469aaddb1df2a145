import { BadRequestException, ForbiddenException } from '@nestjs/common';
import type { DashboardSettings } from './dashboard-options.js';
import { isListedHost, isLoopback, parseHost, type HostAndPort } from './host-header.js';

/** What the guard reads of a request; Express's and Fastify's requests both have it. */
export interface PlatformRequest {
  readonly method: string;
  /** `http` or `https` (behind a proxy, as the platform's trust-proxy setting makes it). */
  readonly protocol: string;
  readonly headers: Record<string, string | string[] | undefined>;
}

/**
 * The header every operator action request must carry. A cross-site HTML form cannot set a header, and a cross-site
 * script can only after a CORS preflight the page never answers.
 */
export const OPERATOR_ACTION_HEADER = 'x-scheduler-lock';

/** Headers a proxy adds to a request it forwards: such a request came from elsewhere, whatever its `Host`. */
const PROXY_HEADERS = ['forwarded', 'via', 'x-real-ip', 'x-client-ip', 'true-client-ip', 'cf-connecting-ip'];

/** The first value of header `name` (lower case). */
export function headerOf(request: PlatformRequest, name: string): string | undefined {
  const value = request.headers[name];
  return Array.isArray(value) ? value[0] : value;
}

/** The request's `Host`, read strictly (400 otherwise): what the host checks and the page's own origin use. */
export function hostOf(request: PlatformRequest): HostAndPort {
  const host = parseHost(headerOf(request, 'host') ?? '');
  if (!host) throw new BadRequestException('The status page needs a Host header of the form host[:port]');
  return host;
}

/**
 * Refuses a `Host` the page does not answer. An open page answers a loopback name (a page elsewhere that rebinds
 * its own name to this machine's address sends its own name: DNS rebinding) that no proxy forwarded (a proxy on
 * this machine sends a loopback name for anyone), or a listed host.
 */
export function checkHost(request: PlatformRequest, host: HostAndPort, settings: DashboardSettings): void {
  if (isListedHost(host, settings.listedHosts)) return;
  if (!settings.open) {
    if (settings.answersAnyHost || isLoopback(host)) return;
    throw new ForbiddenException('The status page answers the hosts of allowedHosts and loopback names only');
  }
  if (!isLoopback(host)) {
    throw new ForbiddenException(
      'The status page under dangerouslyAllowEveryone answers requests to localhost, 127.0.0.1, [::1] or an ' +
        'allowed host only',
    );
  }
  if (Object.keys(request.headers).some((name) => PROXY_HEADERS.includes(name) || name.startsWith('x-forwarded-'))) {
    throw new ForbiddenException(
      'The status page under dangerouslyAllowEveryone answers a forwarded request only at a host of allowedHosts',
    );
  }
}

/**
 * Refuses what a page of another origin asks: an `Origin` other than the page's own (scheme, host and port) or a
 * trusted one, and, but for a top-level navigation to the page itself, what a browser marks as sent by another
 * site. A CORS setting of the app cannot open the page's data to other sites.
 */
export function checkSameOrigin(
  request: PlatformRequest,
  host: HostAndPort,
  settings: DashboardSettings,
  isDocument: boolean,
): void {
  const origin = headerOf(request, 'origin');
  if (origin !== undefined) {
    const own = originOf(`${request.protocol}://${host.hostname}${host.port === undefined ? '' : `:${host.port}`}`);
    const from = originOf(origin);
    if (from === undefined || (from !== own && !settings.trustedOrigins.has(from))) {
      throw new ForbiddenException(`A request from origin ${origin} is refused: not the page's own`);
    }
  }
  const site = headerOf(request, 'sec-fetch-site');
  const navigation = isDocument && headerOf(request, 'sec-fetch-mode') === 'navigate';
  if ((site === 'cross-site' || site === 'same-site') && !navigation) {
    throw new ForbiddenException('A request another site sent is refused');
  }
}

/** Refuses an action a cross-site form could send: it needs a JSON body and the {@link OPERATOR_ACTION_HEADER}. */
export function checkOperatorActionRequest(request: PlatformRequest): void {
  const mediaType = headerOf(request, 'content-type')?.split(';')[0].trim().toLowerCase();
  if (mediaType !== 'application/json') {
    throw new ForbiddenException('An operator action request needs Content-Type: application/json');
  }
  if (headerOf(request, OPERATOR_ACTION_HEADER) !== '1') {
    throw new ForbiddenException(`An operator action request needs the header ${OPERATOR_ACTION_HEADER}: 1`);
  }
}

/** `scheme://host[:port]` of a URL (the default port left out); `undefined` for `null` and other opaque origins. */
function originOf(url: string): string | undefined {
  if (!URL.canParse(url)) return undefined;
  const { origin } = new URL(url);
  return origin === 'null' ? undefined : origin;
}
