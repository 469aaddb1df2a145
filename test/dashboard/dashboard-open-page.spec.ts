import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { PLATFORMS, REPORT_JOB, type Platform } from './dashboard-app.js';
import {
  fakeClockForEachTest,
  startFakeTimeDashboardApp,
  type FakeTimeDashboardApp,
} from './fake-time-dashboard-app.js';
import { rawRequest } from './raw-request.js';

/** The headers the page sends with an operator action POST. */
const ACTION_HEADERS = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };
const NODE_ENV = process.env.NODE_ENV;

let running: FakeTimeDashboardApp | undefined;
let platform: Platform;

fakeClockForEachTest();
afterEach(async () => {
  process.env.NODE_ENV = NODE_ENV;
  await running?.app.close();
  running = undefined;
});

async function start(options: Parameters<typeof startFakeTimeDashboardApp>[0] = {}): Promise<FakeTimeDashboardApp> {
  running = await startFakeTimeDashboardApp({ dangerouslyAllowEveryone: true, ...options }, { platform });
  return running;
}

/** `Host: host[:the app's port]` and `more`, as a client on this machine sends them. */
function hostHeaders(app: FakeTimeDashboardApp, host: string, more: Record<string, string> = {}) {
  return { host: host.replace('{port}', new URL(app.pageUrl).port), ...more };
}

describe.each(PLATFORMS)('the open page (dangerouslyAllowEveryone) on %s', (platformOfBlock) => {
  beforeAll(() => {
    platform = platformOfBlock;
  });

  it('fails the startup when NODE_ENV says production by the time the app starts (dotenv in bootstrap())', async () => {
    const starting = startFakeTimeDashboardApp(
      { dangerouslyAllowEveryone: true },
      { platform, beforeListen: () => (process.env.NODE_ENV = 'production') },
    );
    await expect(starting).rejects.toThrow(
      new SchedulerLockConfigurationError(
        'Status page: dangerouslyAllowEveryone is refused when NODE_ENV is "production" (anything but ' +
          'development, test or unset counts as production); give an authorize(request) callback',
      ),
    );
  });

  it('closes at once when NODE_ENV turns production while it serves, whatever the spelling', async () => {
    const app = await start();
    const session = () => rawRequest(`${app.pageUrl}/api/session`);
    expect((await session()).status).toBe(200);
    for (const production of ['production', ' Production ', 'PRODUCTION', 'prod', 'staging']) {
      process.env.NODE_ENV = production;
      const refused = await session();
      expect([production, refused.status]).toEqual([production, 403]);
      expect(refused.body).not.toContain('"open":true');
      const steered = await rawRequest(`${app.pageUrl}/api/jobs/${REPORT_JOB}/pause`, {
        method: 'POST',
        headers: ACTION_HEADERS,
        body: '{}',
      });
      expect([production, steered.status]).toEqual([production, 403]);
    }
    for (const developer of ['development', 'TEST', '']) {
      process.env.NODE_ENV = developer;
      expect([developer, (await session()).status]).toEqual([developer, 200]);
    }
    expect(app.logs.texts('warn', 'SchedulerLockDashboard')).toContain(
      'The open status page (dangerouslyAllowEveryone) refuses every request: NODE_ENV is "production", which ' +
        'counts as production',
    );
  });

  it('refuses a request a proxy forwarded to a loopback Host: a same-host nginx makes Host 127.0.0.1', async () => {
    const app = await start();
    const proxied: Record<string, string>[] = [
      { 'X-Forwarded-For': '203.0.113.9' },
      { Forwarded: 'for=203.0.113.9;proto=https' },
      { 'X-Real-IP': '203.0.113.9' },
      { Via: '1.1 nginx' },
      { 'X-Forwarded-Host': 'ops.example.com' },
    ];
    for (const headers of proxied) {
      const read = await rawRequest(`${app.pageUrl}/api/jobs`, { headers: hostHeaders(app, '127.0.0.1', headers) });
      expect([headers, read.status]).toEqual([headers, 403]);
      const steered = await rawRequest(`${app.pageUrl}/api/jobs/${REPORT_JOB}/pause`, {
        method: 'POST',
        headers: hostHeaders(app, '127.0.0.1:{port}', { ...ACTION_HEADERS, ...headers }),
        body: '{}',
      });
      expect([headers, steered.status]).toEqual([headers, 403]);
    }
    expect((await rawRequest(`${app.pageUrl}/api/jobs`, { headers: hostHeaders(app, '127.0.0.1') })).status).toBe(200);
  });

  it('answers the hosts of allowedHosts, forwarded by a proxy or not, and no other', async () => {
    const app = await start({ allowedHosts: ['devbox.lan', 'ops.lan:8443'] });
    const statusFor = async (host: string, headers: Record<string, string> = {}) => {
      const response = await rawRequest(`${app.pageUrl}/api/session`, { headers: hostHeaders(app, host, headers) });
      return [host, headers, response.status];
    };
    for (const host of ['devbox.lan', 'devbox.lan:{port}', 'DevBox.LAN', 'ops.lan:8443', 'localhost:{port}']) {
      expect(await statusFor(host)).toEqual([host, {}, 200]);
    }
    const forwarded = { 'X-Forwarded-For': '203.0.113.9' };
    expect(await statusFor('devbox.lan', forwarded)).toEqual(['devbox.lan', forwarded, 200]);
    for (const host of ['ops.lan', 'ops.lan:{port}', 'evil.example', 'devbox.lan.evil.example']) {
      expect(await statusFor(host)).toEqual([host, {}, 403]);
    }
  });

  it('reads Host strictly: no userinfo, a valid host[:port], IPv6 in brackets', async () => {
    const app = await start();
    const statusFor = async (host: string) => {
      const response = await rawRequest(`${app.pageUrl}/api/session`, { headers: hostHeaders(app, host) });
      return [host, response.status];
    };
    for (const host of [
      'evil.example@127.0.0.1:{port}',
      'evil.example@localhost',
      ':x@127.0.0.1',
      '::1',
      '[::1',
      '[::1]x',
      '127.0.0.1:{port}:1',
      '127.0.0.1:99999',
      '127.0.0.1:0',
      '127.0.0.1/path',
      '127.0.0.1\\x',
      'localhost.',
      '[fe80::1%25eth0]',
    ]) {
      expect(await statusFor(host)).toEqual([host, 400]);
    }
    for (const host of ['127.0.0.1:{port}', '[::1]:{port}', '[0:0:0:0:0:0:0:1]', 'LOCALHOST', 'app.localhost']) {
      expect(await statusFor(host)).toEqual([host, 200]);
    }
  });
});
