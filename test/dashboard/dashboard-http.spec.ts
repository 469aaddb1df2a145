import { get as httpGet } from 'node:http';
import { UnauthorizedException } from '@nestjs/common';
import { SchedulerLockConfigurationError, type ClusterNode, type HistoryEntry } from '../../lib/index.js';
import {
  SchedulerLockDashboardModule,
  type DashboardJob,
  type SchedulerLockDashboardOptions,
} from '../../lib/dashboard/index.js';
import { createDashboardSettings } from '../../lib/dashboard/dashboard-options.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { deferred, waitUntil } from '../support/wait-until.js';
import { ISO_TIME, type Wire } from '../support/wire-times.js';
import { PLATFORMS, REPORT_JOB, startDashboardApp, type DashboardApp, type Platform } from './dashboard-app.js';

/** The headers the page sends with an operator action POST. */
const ACTION_HEADERS = { 'Content-Type': 'application/json', 'X-Scheduler-Lock': '1' };
const alice = { authorize: () => ({ actor: 'alice@example.com' }) };

let running: DashboardApp | undefined;
const redis = useSharedRedisPrefix('dashboard', async () => {
  running?.job.hold?.resolve();
  await running?.app.close();
  running = undefined;
});

/** The platform of the `describe.each` block that runs. */
let platform: Platform;

async function start<TRequest>(options: SchedulerLockDashboardOptions<TRequest>): Promise<DashboardApp> {
  running = await startDashboardApp(redis.prefix, options, { platform });
  expect(running.app.getHttpAdapter().getType()).toBe(platform);
  return running;
}

async function getJson<T>(app: DashboardApp, path: string): Promise<T> {
  const response = await fetch(`${app.pageUrl}/api/${path}`);
  expect(response.status).toBe(200);
  return (await response.json()) as T;
}

function steer(app: DashboardApp, action: string, init: { headers?: Record<string, string>; body?: string } = {}) {
  const { headers = ACTION_HEADERS, body = '{}' } = init;
  return fetch(`${app.pageUrl}/api/jobs/${REPORT_JOB}/${action}`, { method: 'POST', headers, body });
}

async function reportJob(app: DashboardApp): Promise<Wire<DashboardJob>> {
  const { jobs } = await getJson<{ jobs: Wire<DashboardJob>[] }>(app, 'jobs');
  return jobs.find((job) => job.jobName === REPORT_JOB)!;
}

describe('SchedulerLockDashboardModule.forRoot: closed by default', () => {
  it('refuses to start without authorize', () => {
    expect(() => SchedulerLockDashboardModule.forRoot({ path: '/scheduler-lock' })).toThrow(
      new SchedulerLockConfigurationError(
        'Status page: an authorize(request) callback is required, it decides who may see and steer the jobs ' +
          '(or dangerouslyAllowEveryone: true, on a developer machine only)',
      ),
    );
    expect(() => (SchedulerLockDashboardModule.forRoot as (options?: object) => unknown)()).toThrow(
      'an authorize(request) callback is required',
    );
    expect(() => SchedulerLockDashboardModule.forRoot({ authorize: 'admin' as never })).toThrow(
      'Status page: authorize must be a function, got string',
    );
  });

  it('refuses dangerouslyAllowEveryone in production, whatever its spelling, and beside authorize', () => {
    expect(() => createDashboardSettings({ dangerouslyAllowEveryone: true }, { NODE_ENV: 'production' })).toThrow(
      new SchedulerLockConfigurationError(
        'Status page: dangerouslyAllowEveryone is refused when NODE_ENV is "production" (anything but ' +
          'development, test or unset counts as production); give an authorize(request) callback',
      ),
    );
    for (const production of ['Production', 'PRODUCTION', 'prod', 'staging', ' production ']) {
      expect(() => createDashboardSettings({ dangerouslyAllowEveryone: true }, { NODE_ENV: production })).toThrow(
        'dangerouslyAllowEveryone is refused when NODE_ENV is',
      );
    }
    for (const developer of [undefined, '', 'development', 'Development', 'test', 'TEST']) {
      expect(createDashboardSettings({ dangerouslyAllowEveryone: true }, { NODE_ENV: developer })).toMatchObject({
        open: true,
      });
    }
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, dangerouslyAllowEveryone: true })).toThrow(
      'authorize and dangerouslyAllowEveryone exclude each other',
    );
  });

  it('refuses a readOnly or dangerouslyAllowEveryone that is not a boolean: a security switch fails closed', () => {
    for (const [value, shown] of [
      ['true', '"true"'],
      [1, '1'],
      ['false', '"false"'],
      [null, 'null'],
    ] as const) {
      expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, readOnly: value as never })).toThrow(
        new SchedulerLockConfigurationError(`Status page: readOnly must be true or false (got ${shown})`),
      );
    }
    expect(() => SchedulerLockDashboardModule.forRoot({ dangerouslyAllowEveryone: 'yes' as never })).toThrow(
      'Status page: dangerouslyAllowEveryone must be true or false (got "yes")',
    );
  });

  it('refuses an unknown option, naming it, and a wrongly typed one', () => {
    expect(() =>
      SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigin: ['https://ops.example.com'] } as never),
    ).toThrow(
      new SchedulerLockConfigurationError(
        'Status page: unknown option "trustedOrigin"; did you mean "trustedOrigins"?',
      ),
    );
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, readonly: true } as never)).toThrow(
      'Status page: unknown option "readonly"; did you mean "readOnly"?',
    );
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, roles: ['ops'] } as never)).toThrow(
      'Status page: unknown option "roles"; the options are path, authorize, dangerouslyAllowEveryone, readOnly, ' +
        'trustedOrigins',
    );
    expect(() =>
      SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: 'https://ops.example.com' as never }),
    ).toThrow(
      new SchedulerLockConfigurationError(
        "Status page: trustedOrigins must be an array of origins such as ['https://ops.example.com'], " +
          'got "https://ops.example.com"',
      ),
    );
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: [42 as never] })).toThrow(
      'trustedOrigins must be origins such as https://ops.example.com, got 42',
    );
    expect(() =>
      SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: ['https://ops.example.com/ui'] }),
    ).toThrow('got "https://ops.example.com/ui"');
    expect(() => SchedulerLockDashboardModule.forRoot('open' as never)).toThrow(
      'Status page: expected an options object, got "open"',
    );
  });

  it('refuses a path that is not a plain URL path, and a trusted origin that is not an origin', () => {
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, path: '/locks/:name' })).toThrow(
      'path must be a plain URL path',
    );
    expect(() => SchedulerLockDashboardModule.forRoot({ ...alice, trustedOrigins: ['ops.example.com'] })).toThrow(
      'trustedOrigins must be origins such as https://ops.example.com, got "ops.example.com"',
    );
  });
});

describe.each(PLATFORMS)('status page over HTTP (%s)', (platformOfBlock) => {
  beforeAll(() => {
    platform = platformOfBlock;
  });

  it('answers 403 to every endpoint when authorize says false, and passes its own HttpException on', async () => {
    const seen: string[] = [];
    const app = await start({
      authorize: (request: { url: string; headers: Record<string, string> }) => {
        seen.push(request.url);
        if (request.headers.authorization === 'Basic prompt') throw new UnauthorizedException('log in first');
        return false;
      },
    });
    for (const path of ['', '/api/session', '/api/jobs', '/api/nodes', `/api/jobs/${REPORT_JOB}/history`]) {
      expect((await fetch(app.pageUrl + path)).status).toBe(403);
    }
    expect((await steer(app, 'pause')).status).toBe(403);
    expect(seen).toEqual([
      '/scheduler-lock',
      '/scheduler-lock/api/session',
      '/scheduler-lock/api/jobs',
      '/scheduler-lock/api/nodes',
      `/scheduler-lock/api/jobs/${REPORT_JOB}/history`,
      `/scheduler-lock/api/jobs/${REPORT_JOB}/pause`,
    ]);
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);

    const prompted = await fetch(`${app.pageUrl}/api/jobs`, { headers: { authorization: 'Basic prompt' } });
    expect(prompted.status).toBe(401);
    expect(await prompted.json()).toMatchObject({ message: 'log in first' });
  });

  it('answers 403 when authorize throws or returns no actor, and logs why', async () => {
    let answer: () => unknown = () => {
      throw new Error('session store down');
    };
    const app = await start({ authorize: () => answer() as never });
    expect((await fetch(`${app.pageUrl}/api/jobs`)).status).toBe(403);
    answer = () => ({ actor: '  ' });
    expect((await fetch(`${app.pageUrl}/api/jobs`)).status).toBe(403);
    answer = () => true;
    expect((await fetch(`${app.pageUrl}/api/jobs`)).status).toBe(403);
    expect(app.logs.texts('warn', 'SchedulerLockDashboard')).toEqual([
      'authorize(request) threw, so the request is refused: session store down',
      'authorize(request) returned neither false nor { actor: string }, so the request is refused',
      'authorize(request) returned neither false nor { actor: string }, so the request is refused',
    ]);
  });

  it('serves one self-contained page under a strict Content-Security-Policy, at the configured path', async () => {
    const app = await start({ ...alice, path: '/ops/locks' });
    const response = await fetch(app.pageUrl);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('text/html; charset=utf-8');
    const csp = response.headers.get('content-security-policy')!;
    expect(csp).toMatch(/^default-src 'none'; script-src 'sha256-[A-Za-z0-9+/]+=*'; style-src 'sha256-/);
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    const html = await response.text();
    expect(html).toContain('<title>Scheduler locks</title>');
    // Nothing from elsewhere: no src/href attribute and no absolute URL in the page but the SVG namespace.
    expect(html).not.toMatch(/\s(src|href)=/);
    expect(html.match(/https?:\/\/[^'"\s]+/g)).toEqual(['http://www.w3.org/2000/svg']);
    expect((await fetch(`${app.origin}/scheduler-lock`)).status).toBe(404);
  });

  it('sends jobs, history and nodes as JSON', async () => {
    const app = await start(alice);
    expect(await getJson(app, 'session')).toEqual({ actor: 'alice@example.com', readOnly: false, open: false });

    const idle = await reportJob(app);
    expect(idle).toMatchObject({
      jobName: REPORT_JOB,
      kind: 'cron',
      schedule: '0 0 0 1 1 *',
      paused: false,
      holdingNode: null,
      lockedUntil: null,
      lastRun: null,
      recentRuns: [],
      health: expect.objectContaining({ jobName: REPORT_JOB, state: 'never-run', unhealthy: false, missed: [] }),
      nodes: [app.node],
    });
    expect(idle.nextFireAt).toBe(nextNewYear().toISOString());

    const { nodes, at } = await getJson<Wire<{ at: Date; nodes: ClusterNode[] }>>(app, 'nodes');
    expect(nodes).toEqual([
      expect.objectContaining({ node: app.node, jobs: [REPORT_JOB], startedAt: expect.stringMatching(ISO_TIME) }),
    ]);
    expect(at).toMatch(ISO_TIME);
    expect(Math.abs(Date.parse(at) - Date.now())).toBeLessThan(5_000);

    await app.admin.trigger(REPORT_JOB, { actor: 'setup' });
    await waitUntil(async () => (await reportJob(app)).lastRun !== null, 'the triggered run is in the history');
    const ran = await reportJob(app);
    expect(ran.lastRun).toMatchObject({ outcome: 'succeeded', node: app.node, manual: { actor: 'setup' } });
    expect(ran.lastRun!.startedAt).toMatch(ISO_TIME);
    expect(ran.recentRuns).toEqual([
      {
        startedAt: ran.lastRun!.startedAt,
        durationMs: ran.lastRun!.durationMs,
        outcome: 'succeeded',
        node: app.node,
        manualActor: 'setup',
      },
    ]);
    const history = await getJson<Wire<HistoryEntry[]>>(app, `jobs/${REPORT_JOB}/history?limit=5`);
    expect(history.map((entry) => entry.type)).toEqual(['run', 'trigger']);
    expect(history.map((entry) => ('at' in entry ? entry.at : entry.startedAt))).toEqual([
      expect.stringMatching(ISO_TIME),
      expect.stringMatching(ISO_TIME),
    ]);
    expect((await fetch(`${app.pageUrl}/api/jobs/${REPORT_JOB}/history?limit=0`)).status).toBe(400);
    expect((await fetch(`${app.pageUrl}/api/jobs/no-such-job/history`)).status).toBe(404);
  });

  it('pauses and resumes as the actor authorize names, with the reason given', async () => {
    const app = await start(alice);
    const paused = await steer(app, 'pause', { body: JSON.stringify({ reason: 'maintenance window' }) });
    expect(paused.status).toBe(200);
    expect(await paused.json()).toEqual({ action: 'pause', job: REPORT_JOB, result: true });
    expect((await app.admin.getJob(REPORT_JOB)).pause).toMatchObject({
      actor: 'alice@example.com',
      reason: 'maintenance window',
    });
    expect(await reportJob(app)).toMatchObject({ paused: true, pause: { actor: 'alice@example.com' } });

    expect(await (await steer(app, 'pause')).json()).toMatchObject({ result: false });
    expect(await (await steer(app, 'resume')).json()).toMatchObject({ result: true });
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);
    const [resumed] = await app.admin.history(REPORT_JOB, 1);
    expect(resumed).toMatchObject({ type: 'resume', actor: 'alice@example.com' });
  });

  it('triggers a run, and unlocks a held lock after showing its holder and fencing token', async () => {
    const app = await start(alice);
    app.job.hold = deferred();
    // Free: nothing to unlock, said so, nothing in the history.
    expect(await (await steer(app, 'unlock')).json()).toMatchObject({ result: { formerNode: null } });
    expect((await app.admin.history(REPORT_JOB)).filter((entry) => entry.type === 'unlock')).toEqual([]);
    const triggered = await steer(app, 'trigger');
    expect(triggered.status).toBe(200);
    expect(await triggered.json()).toMatchObject({
      action: 'trigger',
      result: { triggered: true, result: { node: app.node, state: 'started' } },
    });
    expect(app.job.runs).toBe(1);

    const held = await reportJob(app);
    expect(held.holdingNode).toBe(app.node);
    expect(Date.parse(held.lockedSince!)).toBeLessThanOrEqual(Date.now());
    expect(Date.parse(held.lockedUntil!)).toBeGreaterThan(Date.now());
    expect(held.fencingToken).toBe(Number(await redis.client.get(`${redis.prefix}:{${held.lockName}}:fence`)));
    expect(await (await steer(app, 'trigger')).json()).toMatchObject({
      result: { triggered: false, reason: 'running', holdingNode: app.node },
    });

    const unlocked = await steer(app, 'unlock', { body: JSON.stringify({ reason: 'stuck' }) });
    expect(await unlocked.json()).toEqual({
      action: 'unlock',
      job: REPORT_JOB,
      result: { formerNode: app.node },
    });
    expect((await app.admin.getJob(REPORT_JOB)).holdingNode).toBeNull();
    expect((await app.admin.history(REPORT_JOB, 1))[0]).toMatchObject({ type: 'unlock', actor: 'alice@example.com' });
    // Unlocked already: said so, and still one unlock entry.
    expect(await (await steer(app, 'unlock')).json()).toMatchObject({ result: { formerNode: null } });
    const unlocks = (await app.admin.history(REPORT_JOB)).filter((entry) => entry.type === 'unlock');
    expect(unlocks).toHaveLength(1);
    app.job.hold.resolve();
  });

  it('refuses an action a cross-site form or script could forge: form-encoded, no header, another origin', async () => {
    const app = await start(alice);
    const refusals: [string, Record<string, string>, string][] = [
      [
        'a cross-site HTML form',
        { 'Content-Type': 'application/x-www-form-urlencoded', Origin: 'https://evil.example' },
        'reason=x',
      ],
      ['a same-origin form', { 'Content-Type': 'application/x-www-form-urlencoded', Origin: app.origin }, 'reason=x'],
      ['a text/plain form with the header', { 'Content-Type': 'text/plain', 'X-Scheduler-Lock': '1' }, '{}'],
      ['JSON without the header', { 'Content-Type': 'application/json' }, '{}'],
      ['JSON with the header from another origin', { ...ACTION_HEADERS, Origin: 'https://evil.example' }, '{}'],
      ['JSON with the header from an opaque origin', { ...ACTION_HEADERS, Origin: 'null' }, '{}'],
    ];
    for (const [what, headers, body] of refusals) {
      const response = await steer(app, 'pause', { headers, body });
      expect([what, response.status]).toEqual([what, 403]);
    }
    expect((await fetch(`${app.pageUrl}/api/jobs/${REPORT_JOB}/pause`)).status).toBe(404);
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);
    expect(await app.admin.history(REPORT_JOB, 10)).toEqual([]);

    expect((await steer(app, 'pause', { headers: { ...ACTION_HEADERS, Origin: app.origin } })).status).toBe(200);
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(true);
  });

  it('refuses an action from the same host under another scheme or port: an origin is scheme, host and port', async () => {
    const app = await start(alice);
    const { port } = new URL(app.origin);
    for (const origin of [`https://127.0.0.1:${port}`, `http://127.0.0.1:${Number(port) + 1}`, 'http://127.0.0.1']) {
      const response = await steer(app, 'pause', { headers: { ...ACTION_HEADERS, Origin: origin } });
      expect([origin, response.status]).toEqual([origin, 403]);
    }
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);
    expect((await steer(app, 'pause', { headers: { ...ACTION_HEADERS, Origin: app.origin } })).status).toBe(200);
  });

  // A body the platform cannot parse is answered by its body parser, before any of the page's code runs.
  it('sends nosniff and no-store with every response, errors included', async () => {
    let allowed = true;
    const app = await start({ authorize: () => (allowed ? { actor: 'alice' } : false) });
    const responses: [string, Promise<Response>][] = [
      ['page', fetch(app.pageUrl)],
      ['session', fetch(`${app.pageUrl}/api/session`)],
      ['bad limit', fetch(`${app.pageUrl}/api/jobs/${REPORT_JOB}/history?limit=0`)],
      ['unknown job', fetch(`${app.pageUrl}/api/jobs/no-such-job/history`)],
      ['no action header', steer(app, 'pause', { headers: { 'Content-Type': 'application/json' } })],
      ['unknown action', steer(app, 'delete')],
    ];
    const statuses: Record<string, number> = {};
    for (const [what, responding] of responses) {
      const response = await responding;
      statuses[what] = response.status;
      expect([what, response.headers.get('x-content-type-options')]).toEqual([what, 'nosniff']);
      expect([what, response.headers.get('cache-control')]).toEqual([what, 'no-store']);
    }
    allowed = false;
    const refused = await fetch(`${app.pageUrl}/api/jobs`);
    statuses.refused = refused.status;
    expect(refused.headers.get('x-content-type-options')).toBe('nosniff');
    expect(refused.headers.get('cache-control')).toBe('no-store');
    expect(statuses).toEqual({
      page: 200,
      session: 200,
      'bad limit': 400,
      'unknown job': 404,
      'no action header': 403,
      'unknown action': 404,
      refused: 403,
    });
  });

  it('accepts an operator action request from a trusted origin', async () => {
    const app = await start({ ...alice, trustedOrigins: ['https://ops.example.com'] });
    expect(
      (await steer(app, 'pause', { headers: { ...ACTION_HEADERS, Origin: 'https://ops.example.com' } })).status,
    ).toBe(200);
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(true);
  });

  it('answers 404 for an unknown job or action and 400 for a bad reason', async () => {
    const app = await start(alice);
    const unknownJob = await fetch(`${app.pageUrl}/api/jobs/no-such-job/pause`, {
      method: 'POST',
      headers: ACTION_HEADERS,
      body: '{}',
    });
    expect(unknownJob.status).toBe(404);
    expect(await unknownJob.json()).toMatchObject({
      message: 'No node of the cluster runs a locked job named "no-such-job"',
    });
    expect((await steer(app, 'delete')).status).toBe(404);
    expect((await steer(app, 'pause', { body: JSON.stringify({ reason: 42 }) })).status).toBe(400);
    expect((await steer(app, 'pause', { body: JSON.stringify({ reason: 'x'.repeat(501) }) })).status).toBe(400);
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);
  });

  it('refuses every operator action when readOnly, and says so in the session', async () => {
    const app = await start({ ...alice, readOnly: true });
    expect(await getJson(app, 'session')).toEqual({ actor: 'alice@example.com', readOnly: true, open: false });
    for (const action of ['pause', 'resume', 'trigger', 'unlock']) {
      const response = await steer(app, action);
      expect([action, response.status]).toEqual([action, 403]);
    }
    expect(await app.admin.history(REPORT_JOB, 10)).toEqual([]);
    expect((await reportJob(app)).jobName).toBe(REPORT_JOB);
  });

  it('treats any readOnly from authorize but false or absent as read-only: "true", 1 and "false" included', async () => {
    let readOnly: unknown;
    const app = await start({ authorize: () => ({ actor: 'viewer', readOnly }) as never });
    for (const claim of ['true', 1, 'false', 0, null, 'no']) {
      readOnly = claim;
      expect([claim, await getJson(app, 'session')]).toEqual([claim, { actor: 'viewer', readOnly: true, open: false }]);
      expect([claim, (await steer(app, 'pause')).status]).toEqual([claim, 403]);
    }
    expect((await app.admin.getJob(REPORT_JOB)).paused).toBe(false);
    readOnly = false;
    expect(await getJson(app, 'session')).toMatchObject({ readOnly: false });
    expect((await steer(app, 'pause')).status).toBe(200);
  });

  it('refuses actions to a user authorize marks read-only, and lets the others steer', async () => {
    const app = await start({
      authorize: (request: { headers: Record<string, string> }) =>
        request.headers['x-user'] === 'viewer' ? { actor: 'viewer', readOnly: true } : { actor: 'operator' },
    });
    expect((await steer(app, 'pause', { headers: { ...ACTION_HEADERS, 'X-User': 'viewer' } })).status).toBe(403);
    expect((await steer(app, 'pause', { headers: { ...ACTION_HEADERS, 'X-User': 'operator' } })).status).toBe(200);
    expect((await app.admin.getJob(REPORT_JOB)).pause?.actor).toBe('operator');
  });

  it('lets everyone in as anonymous under dangerouslyAllowEveryone, and warns at startup', async () => {
    const app = await start({ dangerouslyAllowEveryone: true });
    expect(await getJson(app, 'session')).toEqual({ actor: 'anonymous', readOnly: false, open: true });
    expect(app.logs.texts('warn', 'SchedulerLockDashboard')).toEqual([
      'The status page at /scheduler-lock lets everyone see and steer the locked jobs (dangerouslyAllowEveryone): ' +
        'for a developer machine only',
    ]);
  });

  it('answers an open page only to a loopback or trusted Host, so DNS rebinding cannot reach it', async () => {
    const app = await start({ dangerouslyAllowEveryone: true, trustedOrigins: ['http://devbox.lan:8080'] });
    const { port } = new URL(app.origin);
    const statusFor = async (host: string) => [host, await requestWithHost(`${app.pageUrl}/api/session`, host)];
    for (const host of [`evil.example:${port}`, 'evil.example', `127.0.0.1.evil.example:${port}`, 'devbox.lan']) {
      expect(await statusFor(host)).toEqual([host, 403]);
    }
    for (const host of [
      `localhost:${port}`,
      `127.0.0.1:${port}`,
      `[::1]:${port}`,
      'app.localhost',
      'devbox.lan:8080',
    ]) {
      expect(await statusFor(host)).toEqual([host, 200]);
    }
  });
});

/** The status of a GET of `url` sent with `Host: host` (fetch always sends the URL's own). */
function requestWithHost(url: string, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpGet(url, { headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode!);
    });
    request.on('error', reject);
  });
}

/** The next 1 January, 00:00 local time: when the report job's cron fires next. */
function nextNewYear(): Date {
  return new Date(new Date().getFullYear() + 1, 0, 1);
}
