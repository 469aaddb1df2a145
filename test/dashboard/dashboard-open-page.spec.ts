import { jest } from '@jest/globals';
import { SchedulerLockConfigurationError } from '../../lib/index.js';
import { PLATFORMS, REPORT_JOB, type Platform } from './dashboard-app.js';
import { startFakeTimeDashboardApp, type FakeTimeDashboardApp } from './fake-time-dashboard-app.js';
import { rawRequest } from './raw-request.js';

/** The headers the page sends with a steering POST. */
const STEERING = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };
const NODE_ENV = process.env.NODE_ENV;

let running: FakeTimeDashboardApp | undefined;
let platform: Platform;

beforeEach(() =>
  jest.useFakeTimers({
    now: new Date('2027-03-01T09:00:00Z'),
    doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'],
  }),
);
afterEach(async () => {
  process.env.NODE_ENV = NODE_ENV;
  await running?.app.close();
  running = undefined;
  jest.useRealTimers();
});

async function start(options: Parameters<typeof startFakeTimeDashboardApp>[0] = {}): Promise<FakeTimeDashboardApp> {
  running = await startFakeTimeDashboardApp({ dangerouslyAllowEveryone: true, ...options }, { platform });
  return running;
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
        headers: STEERING,
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
});
