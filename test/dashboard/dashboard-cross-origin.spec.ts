import { PLATFORMS, REPORT_JOB, type Platform } from './dashboard-app.js';
import {
  fakeClockForEachTest,
  startFakeTimeDashboardApp,
  type FakeTimeDashboardApp,
} from './fake-time-dashboard-app.js';
import { rawRequest, type RawResponse } from './raw-request.js';

const alice = { authorize: () => ({ actor: 'alice@example.com' }) };
/** What an app that lets every site call it with cookies writes: `app.enableCors({ origin: true, credentials: true })`. */
const EVERY_ORIGIN_WITH_CREDENTIALS = { origin: true, credentials: true };
const CORS_HEADERS = [
  'access-control-allow-origin',
  'access-control-allow-credentials',
  'access-control-expose-headers',
] as const;
const READS = ['', '/api/session', '/api/jobs', '/api/nodes', `/api/jobs/${REPORT_JOB}/history`];

let running: FakeTimeDashboardApp | undefined;
let platform: Platform;

fakeClockForEachTest();
afterEach(async () => {
  await running?.app.close();
  running = undefined;
});

/** The CORS headers of `response` that would let a page of another origin read it. */
function corsHeadersOf(response: RawResponse): Record<string, unknown> {
  return Object.fromEntries(
    CORS_HEADERS.filter((name) => name in response.headers).map((name) => [name, response.headers[name]]),
  );
}

describe.each(PLATFORMS)('reads from another origin, in an app with CORS for every origin (%s)', (platformOfBlock) => {
  beforeAll(() => {
    platform = platformOfBlock;
  });

  it("refuses a read whose Origin is not the page's own, and sends it no CORS header", async () => {
    running = await startFakeTimeDashboardApp(alice, { platform, cors: EVERY_ORIGIN_WITH_CREDENTIALS });
    for (const origin of [
      'https://evil.example',
      'null',
      `http://127.0.0.1:${Number(new URL(running.pageUrl).port) + 1}`,
    ]) {
      for (const path of READS) {
        const response = await rawRequest(running.pageUrl + path, { headers: { Origin: origin, Cookie: 'sid=alice' } });
        expect([origin, path, response.status, corsHeadersOf(response)]).toEqual([origin, path, 403, {}]);
        expect(response.body).not.toContain('alice@example.com');
      }
    }
  });

  it('refuses an API read a browser marks Sec-Fetch-Site: cross-site or same-site, Origin or not', async () => {
    running = await startFakeTimeDashboardApp(alice, { platform, cors: EVERY_ORIGIN_WITH_CREDENTIALS });
    for (const site of ['cross-site', 'same-site']) {
      for (const path of READS.slice(1)) {
        const response = await rawRequest(running.pageUrl + path, {
          headers: { 'Sec-Fetch-Site': site, 'Sec-Fetch-Mode': 'no-cors' },
        });
        expect([site, path, response.status, corsHeadersOf(response)]).toEqual([site, path, 403, {}]);
      }
    }
  });

  it("answers the page's own reads, with no CORS header: no other origin may read them", async () => {
    running = await startFakeTimeDashboardApp(alice, { platform, cors: EVERY_ORIGIN_WITH_CREDENTIALS });
    const own = new URL(running.pageUrl).origin;
    const asked: Record<string, string>[] = [
      {},
      { Origin: own, 'Sec-Fetch-Site': 'same-origin' },
      { 'Sec-Fetch-Site': 'none', 'Sec-Fetch-Mode': 'navigate' },
    ];
    for (const headers of asked) {
      for (const path of READS) {
        const response = await rawRequest(running.pageUrl + path, { headers });
        expect([headers, path, response.status, corsHeadersOf(response)]).toEqual([headers, path, 200, {}]);
      }
    }
    // A link from another site opens the page itself: a navigation, which no page of that site can read.
    const followed = await rawRequest(running.pageUrl, {
      headers: { 'Sec-Fetch-Site': 'cross-site', 'Sec-Fetch-Mode': 'navigate', 'Sec-Fetch-Dest': 'document' },
    });
    expect(followed.status).toBe(200);
  });

  it('answers a trusted origin, still with no CORS header', async () => {
    const trusted = 'https://ops.example.com';
    running = await startFakeTimeDashboardApp(
      { ...alice, trustedOrigins: [trusted] },
      { platform, cors: EVERY_ORIGIN_WITH_CREDENTIALS },
    );
    const response = await rawRequest(`${running.pageUrl}/api/session`, {
      headers: { Origin: trusted, 'Sec-Fetch-Site': 'same-origin' },
    });
    expect([response.status, corsHeadersOf(response)]).toEqual([200, {}]);
  });
});
