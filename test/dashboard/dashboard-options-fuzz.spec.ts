import { isIPv6 } from 'node:net';
import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { createDashboardSettings } from '../../lib/dashboard/dashboard-options.js';
import { seededRandom } from '../chaos/fault-schedule.js';

/** `FUZZ_SEED=<n>` replays a run; the seed of a failure is in its message. */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_127);
const ROUNDS = 4_000;
const OPTIONS = ['path', 'authorize', 'dangerouslyAllowEveryone', 'readOnly', 'trustedOrigins', 'allowedHosts'];
const TYPOS = ['paths', 'readonly', 'trustedOrigin', 'allowedHost', 'allowEveryone', 'roles'];
/** Pieces the random text is made of: what the options allow, and what a URL or a host could smuggle in. */
const FRAGMENTS = [
  ...['a', 'Z', '0', '9', 'ops', 'locks', 'devbox', 'lan', 'example', 'com', 'localhost', '127.0.0.1', '::1'],
  ...['.', '..', '/', '//', '-', '_', '~', ':', '@', '[', ']', '%2e', '%2F', '?', '#', '*', '\\', ' ', '\t', '\n'],
  ...['http://', 'https://', 'HTTPS://', 'ftp://', 'javascript:', ':80', ':443', ':8080', ':0', ':99999', 'é', ''],
];
/** Values the docs allow, for the fuzzer to start from. */
const VALID = {
  path: ['/scheduler-lock', 'ops/locks', '/a.b/~c_d-e'],
  origin: ['https://ops.example.com', 'http://devbox.lan:8080', 'http://127.0.0.1:3000', 'http://[::1]:3000'],
  host: ['devbox.lan', 'devbox.lan:8080', '10.0.0.5', '[fd00::5]:3000', 'localhost:3000'],
};

const LABEL = /^[A-Za-z0-9_](?:[A-Za-z0-9_-]{0,61}[A-Za-z0-9_])?$/;
const PORT = /^[1-9][0-9]{0,4}$/;

/** What the docs of `SchedulerLockDashboardOptions` allow, written from them, apart from the code it checks. */
function documented(options: Record<string, unknown>): boolean {
  const { path, authorize, dangerouslyAllowEveryone, readOnly, trustedOrigins, allowedHosts } = options;
  return (
    Object.keys(options).every((key) => OPTIONS.includes(key)) &&
    (authorize === undefined || typeof authorize === 'function') &&
    [dangerouslyAllowEveryone, readOnly].every((flag) => flag === undefined || typeof flag === 'boolean') &&
    (typeof authorize === 'function') !== (dangerouslyAllowEveryone === true) &&
    (path === undefined || isDocumentedPath(path)) &&
    (trustedOrigins === undefined ||
      (Array.isArray(trustedOrigins) && [...trustedOrigins].every(isDocumentedOrigin))) &&
    (allowedHosts === undefined || (Array.isArray(allowedHosts) && [...allowedHosts].every(isDocumentedHost)))
  );
}

function isDocumentedPath(path: unknown): boolean {
  if (typeof path !== 'string') return false;
  const segments = (path.startsWith('/') ? path.slice(1) : path).split('/');
  return segments.every((segment) => /^[A-Za-z0-9._~-]+$/.test(segment) && segment !== '.' && segment !== '..');
}

/** `host` or `host:port`: a host name, an IPv4 address or `[IPv6]`. */
function isDocumentedHost(host: unknown): boolean {
  if (typeof host !== 'string') return false;
  const [, name, port] = /^(\[[^\]]*\]|[^:]*)(?::(.*))?$/.exec(host) ?? [];
  if (port !== undefined && !(PORT.test(port) && Number(port) <= 65_535)) return false;
  if (name?.startsWith('[')) return isIPv6(name.slice(1, -1)) && !name.includes('%');
  return name !== undefined && name.length <= 253 && name.split('.').every((label) => LABEL.test(label));
}

/** `http(s)://host[:port]` as a browser sends it: lower case, no default port, nothing after. */
function isDocumentedOrigin(origin: unknown): boolean {
  if (typeof origin !== 'string') return false;
  const [, scheme, host] = /^(https?):\/\/([^/?#]+)$/.exec(origin) ?? [];
  if (!host || host !== host.toLowerCase() || !isDocumentedHost(host)) return false;
  return !host.endsWith(scheme === 'http' ? ':80' : ':443');
}

describe(`the status page's options, fuzzed (seed ${SEED})`, () => {
  it('accepts nothing the docs do not allow, and refuses the rest with a configuration error', () => {
    const random = seededRandom(SEED);
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)];
    const text = () => Array.from({ length: 1 + Math.floor(random() * 5) }, () => pick(FRAGMENTS)).join('');
    /** A valid value with up to two random edits: where a lax check lets something through. */
    const nearly = (values: readonly string[]) => {
      let value = pick(values);
      for (let edits = Math.floor(random() * 3); edits > 0; edits--) {
        const at = Math.floor(random() * (value.length + 1));
        value =
          random() < 0.7
            ? value.slice(0, at) + pick(FRAGMENTS) + value.slice(at)
            : value.slice(0, at) + value.slice(at + 1);
      }
      return random() < 0.1 ? value.toUpperCase() : value;
    };
    const anything = (): unknown =>
      pick([undefined, null, true, false, 0, 1, NaN, '', 'true', {}, () => ({ actor: 'x' }), text(), [text()]]);
    const list = (values: readonly string[]) =>
      random() < 0.8 ? Array.from({ length: Math.floor(random() * 3) }, () => nearly(values)) : anything();
    const valueOf: Record<string, () => unknown> = {
      path: () => (random() < 0.8 ? nearly(VALID.path) : anything()),
      authorize: () => (random() < 0.8 ? () => ({ actor: 'alice' }) : anything()),
      dangerouslyAllowEveryone: () => (random() < 0.8 ? true : anything()),
      readOnly: () => (random() < 0.8 ? random() < 0.5 : anything()),
      trustedOrigins: () => list(VALID.origin),
      allowedHosts: () => list(VALID.host),
    };

    const outcomes = { accepted: 0, refused: 0 };
    for (let round = 0; round < ROUNDS; round++) {
      const options: Record<string, unknown> = {};
      const access = random() < 0.5 ? 'authorize' : 'dangerouslyAllowEveryone';
      for (const key of OPTIONS) {
        if (key === access || random() < (key === 'authorize' || key === 'dangerouslyAllowEveryone' ? 0.1 : 0.5)) {
          options[key] = valueOf[key]();
        }
      }
      if (random() < 0.05) options[pick(TYPOS)] = anything();
      let accepted: boolean;
      try {
        createDashboardSettings(options, { NODE_ENV: 'development' });
        accepted = true;
      } catch (error) {
        expect([options, error]).toEqual([options, expect.any(SchedulerLockConfigurationError)]);
        expect([options, (error as Error).message]).toEqual([options, expect.stringMatching(/^Status page: /)]);
        accepted = false;
      }
      if (accepted) expect([round, options, documented(options)]).toEqual([round, options, true]);
      outcomes[accepted ? 'accepted' : 'refused'] += 1;
    }
    // A fuzzer that only ever hits one side tests nothing.
    expect(outcomes.accepted).toBeGreaterThan(ROUNDS / 10);
    expect(outcomes.refused).toBeGreaterThan(ROUNDS / 10);
  });
});
