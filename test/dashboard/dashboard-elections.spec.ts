import { PLATFORMS } from './dashboard-app.js';
import {
  fakeClockForEachTest,
  startFakeTimeDashboardApp,
  type FakeTimeDashboardApp,
} from './fake-time-dashboard-app.js';
import { rawRequest } from './raw-request.js';

/** The headers the page sends with an operator action POST. */
const ACTION_HEADERS = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };

let running: FakeTimeDashboardApp | undefined;
fakeClockForEachTest();
afterEach(async () => {
  await running?.app.close();
  running = undefined;
});

describe.each(PLATFORMS)("the page's election API on %s", (platform) => {
  it('shows an election with no leader, and refuses a step-down (no-leader), read-only users included', async () => {
    running = await startFakeTimeDashboardApp({ dangerouslyAllowEveryone: true }, { platform });
    const read = await rawRequest(`${running.pageUrl}/api/elections/feed`);
    expect([read.status, JSON.parse(read.body)]).toEqual([
      200,
      { election: 'feed', leader: null, term: null, since: null },
    ]);
    const steered = await rawRequest(`${running.pageUrl}/api/elections/feed/step-down`, {
      method: 'POST',
      headers: ACTION_HEADERS,
      body: '{"reason":"drain"}',
    });
    expect([steered.status, JSON.parse(steered.body)]).toEqual([200, { steppedDown: false, reason: 'no-leader' }]);
  });

  it('refuses a step-down from a read-only user (403)', async () => {
    running = await startFakeTimeDashboardApp({ dangerouslyAllowEveryone: true, readOnly: true }, { platform });
    const steered = await rawRequest(`${running.pageUrl}/api/elections/feed/step-down`, {
      method: 'POST',
      headers: ACTION_HEADERS,
      body: '{}',
    });
    expect(steered.status).toBe(403);
  });
});
