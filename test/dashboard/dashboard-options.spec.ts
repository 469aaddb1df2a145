import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { SchedulerLockDashboardModule } from '../../lib/dashboard/index.js';
import { createDashboardSettings } from '../../lib/dashboard/dashboard-options.js';

const alice = { authorize: () => ({ actor: 'alice@example.com' }) };

describe('SchedulerLockDashboardModule.forRoot: the options of the page, checked at startup', () => {
  it('refuses an empty path, the root, a . or .. segment and any other path a URL would rewrite', () => {
    for (const path of ['', '/', '.', '..', '/..', '/ops/../admin', '/ops/./locks', '/ops/', '//ops', 'ops//locks']) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, path })).toThrow(
        new SchedulerLockConfigurationError(
          'Status page: path must be a plain URL path such as /scheduler-lock (segments of letters, digits and ' +
            `. _ ~ -, none of them . or ..), got ${JSON.stringify(path)}`,
        ),
      );
    }
    for (const path of ['/ops/%2e%2e', '/ops?x=1', '/ops#top', '/ops locks', '/öps', '\\ops', 42, null]) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, path: path as string })).toThrow(
        `path must be a plain URL path such as /scheduler-lock (segments of letters, digits and . _ ~ -, none of ` +
          `them . or ..), got ${JSON.stringify(path)}`,
      );
    }
  });

  it('mounts a plain path with one leading /, written with it or not', () => {
    for (const [path, mounted] of [
      ['/ops/locks', '/ops/locks'],
      ['ops/locks', '/ops/locks'],
      ['/a.b/~c_d-e/...', '/a.b/~c_d-e/...'],
    ]) {
      expect(createDashboardSettings({ ...alice, path }).path).toBe(mounted);
    }
  });

  it('refuses an allowedHosts that is not a list of host names, with or without a port, naming the value', () => {
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, allowedHosts: 'devbox.lan' as never })).toThrow(
      new SchedulerLockConfigurationError(
        "Status page: allowedHosts must be an array of hosts such as ['devbox.lan', 'devbox.lan:8080'], " +
          'got "devbox.lan"',
      ),
    );
    for (const host of [
      'evil.example@127.0.0.1',
      'http://devbox.lan',
      'devbox.lan/ops',
      'devbox.lan:0',
      'devbox.lan:65536',
      'devbox.lan:',
      '::1',
      '[::1',
      '[fe80::1%eth0]',
      '*.example.com',
      'devbox.lan.',
      '-devbox.lan',
      '',
      42,
      null,
    ]) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, allowedHosts: [host as string] })).toThrow(
        new SchedulerLockConfigurationError(
          'Status page: allowedHosts must hold host names, with or without a port (such as devbox.lan, ' +
            `devbox.lan:8080 or [::1]:3000), got ${JSON.stringify(host)}`,
        ),
      );
    }
    const withPassword = () => SchedulerLockDashboardModule.forRoot({ ...alice, allowedHosts: ['ops:s3cret@devbox'] });
    expect(withPassword).toThrow('got "ops:***@devbox"');
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, allowedHost: ['devbox.lan'] } as never)).toThrow(
      'Status page: unknown option "allowedHost"; did you mean "allowedHosts"?',
    );
  });

  it('accepts host names, IPv4 and bracketed IPv6 addresses in allowedHosts, with or without a port', () => {
    const settings = createDashboardSettings({
      ...alice,
      allowedHosts: ['DevBox.lan', 'devbox.lan:8080', '10.0.0.5', '[FD00::5]:3000', 'my_app'],
    });
    expect(settings.listedHosts).toEqual([
      { hostname: 'devbox.lan', port: undefined },
      { hostname: 'devbox.lan', port: 8080 },
      { hostname: '10.0.0.5', port: undefined },
      { hostname: '[fd00::5]', port: 3000 },
      { hostname: 'my_app', port: undefined },
    ]);
  });

  it('refuses a trusted origin not written as a browser sends it, and says how it would be', () => {
    for (const [origin, canonical] of [
      ['https://ops.example.com/', 'https://ops.example.com'],
      ['HTTPS://Ops.Example.com', 'https://ops.example.com'],
      ['https://ops.example.com:443', 'https://ops.example.com'],
      ['https:ops.example.com', 'https://ops.example.com'],
      [' https://ops.example.com', 'https://ops.example.com'],
    ]) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: [origin] })).toThrow(
        new SchedulerLockConfigurationError(
          'Status page: trustedOrigins must be origins such as https://ops.example.com, ' +
            `got ${JSON.stringify(origin)}; did you mean ${canonical}?`,
        ),
      );
    }
    for (const origin of ['https://ops..example.com', 'ftp://ops.example.com', 'https://ops:s3cret@example.com']) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: [origin] })).toThrow(
        'trustedOrigins must be origins such as https://ops.example.com, got',
      );
    }
  });
});
