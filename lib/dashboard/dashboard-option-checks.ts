import { SchedulerLockConfigurationError } from '../core/provider/lock-configuration.js';
import { quoted } from '../core/provider/message-text.js';
import { parseHost, type HostAndPort } from './host-header.js';

/** How the status page's messages begin. */
export const SUBJECT = 'Status page';
/** The default `path` of the page. */
export const DEFAULT_DASHBOARD_PATH = '/scheduler-lock';

/** One segment of the page's path: URL-safe characters only, and not `.` or `..`, which a URL resolves away. */
const PATH_SEGMENT = /^[A-Za-z0-9._~-]+$/;

/** The page's path, `/` first: one or more plain segments, each but the first after one `/`. */
export function checkedPath(path: unknown): string {
  const segments = typeof path === 'string' ? path.replace(/^\//, '').split('/') : [''];
  if (!segments.every((segment) => PATH_SEGMENT.test(segment) && segment !== '.' && segment !== '..')) {
    throw new SchedulerLockConfigurationError(
      `${SUBJECT}: path must be a plain URL path such as ${DEFAULT_DASHBOARD_PATH} (segments of letters, digits and ` +
        `. _ ~ -, none of them . or ..), got ${quoted(path)}`,
    );
  }
  return `/${segments.join('/')}`;
}

/**
 * The trusted origins, each exactly as a browser sends it in `Origin`: `http(s)://host[:port]`, lower case,
 * without its default port or a trailing `/`; with its host, which an open page answers.
 */
export function checkedOrigins(origins: unknown): { origin: string; host: HostAndPort }[] {
  return listOption(origins, 'trustedOrigins', "origins such as ['https://ops.example.com']").map((origin) => {
    const url = typeof origin === 'string' && URL.canParse(origin) ? new URL(origin) : undefined;
    const host = url && parseHost(url.host);
    if (!url || !host || origin !== url.origin || !['http:', 'https:'].includes(url.protocol)) {
      const hint = url && url.origin !== 'null' && origin !== url.origin ? `; did you mean ${url.origin}?` : '';
      throw new SchedulerLockConfigurationError(
        `${SUBJECT}: trustedOrigins must be origins such as https://ops.example.com, ` + `got ${quoted(origin)}${hint}`,
      );
    }
    return { origin, host };
  });
}

/** The allowed hosts: each a host name, an IPv4 address or an `[IPv6]` one, with or without `:port`. */
export function checkedHosts(hosts: unknown): HostAndPort[] | undefined {
  if (hosts === undefined) return undefined;
  return listOption(hosts, 'allowedHosts', "hosts such as ['devbox.lan', 'devbox.lan:8080']").map((host) => {
    const parsed = typeof host === 'string' ? parseHost(host) : undefined;
    if (!parsed) {
      throw new SchedulerLockConfigurationError(
        `${SUBJECT}: allowedHosts must hold host names, with or without a port (such as devbox.lan, ` +
          `devbox.lan:8080 or [::1]:3000), got ${quoted(host)}`,
      );
    }
    return parsed;
  });
}

/** The items of `value`, an array (a hole read as `undefined`), none when absent; else an error naming `option`. */
function listOption(value: unknown, option: string, expected: string): unknown[] {
  if (value === undefined) return [];
  if (Array.isArray(value)) return Array.from(value);
  throw new SchedulerLockConfigurationError(
    `${SUBJECT}: ${option} must be an array of ${expected}, got ${quoted(value)}`,
  );
}
