import { existsSync } from 'node:fs';
import { copyFile, mkdir } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { Injectable } from '@nestjs/common';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { LeaderElection } from '../../lib/leader/index.js';
import { jobEvent } from '../support/lock-event-match.js';
import { events, nextEvent } from '../support/lock-events.js';
import { useSharedRedisPrefix } from '../support/redis-prefix.js';
import { deferred, waitUntil } from '../support/wait-until.js';
import { REPORT_JOB, TICKING_JOB, startDashboardApp, type DashboardApp } from './dashboard-app.js';

/** Debian's chromium (.ci/run installs it): playwright-core drives it, and downloads no browser of its own. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const alice = { authorize: () => ({ actor: 'alice@example.com' }) };
/** Where the walkthrough saves its screenshot (ignored by git); `UPDATE_SCREENSHOT=1` also copies it to docs/. */
const SCREENSHOT = fileURLToPath(new URL('../../test-output/dashboard/status-page.png', import.meta.url));
const DOCS_SCREENSHOT = fileURLToPath(new URL('../../docs/status-page.png', import.meta.url));

let browser: Browser;
let running: { app: DashboardApp; context?: BrowserContext } | undefined;
const redis = useSharedRedisPrefix('dashboard-browser', async () => {
  running?.app.tickingJob?.hold?.resolve();
  await running?.context?.close();
  await running?.app.app.close();
  running = undefined;
});

beforeAll(async () => {
  if (!existsSync(CHROMIUM))
    throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);
  browser = await chromium.launch({ executablePath: CHROMIUM });
});
afterAll(() => browser?.close());

/** What the page did: every request it made, anything aimed elsewhere than the app (aborted), its errors. */
interface PageTraffic {
  readonly requests: string[];
  readonly foreign: string[];
  readonly errors: string[];
}

/** The status page in a fresh browser context, every request outside the app aborted and recorded. */
async function openPage(app: DashboardApp): Promise<{ page: Page; traffic: PageTraffic }> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 720 } });
  running!.context = context;
  const traffic: PageTraffic = { requests: [], foreign: [], errors: [] };
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (new URL(url).origin === app.origin) return route.continue();
    traffic.foreign.push(url);
    return route.abort();
  });
  const page = await context.newPage();
  // Under Jest's 30 s: a page that never renders fails on the locator's message.
  page.setDefaultTimeout(10_000);
  page.on('request', (request) => traffic.requests.push(`${request.method()} ${request.url()}`));
  // A script or style the Content-Security-Policy blocks is reported as a console error.
  page.on('console', (message) => {
    if (message.type() === 'error') traffic.errors.push(message.text());
  });
  page.on('pageerror', (error) => traffic.errors.push(error.message));
  await page.goto(app.pageUrl);
  return { page, traffic };
}

/** An election whose name is markup, as any text read from the store may be: the page must show it as text. */
const MARKUP = '<img src=x onerror="window.injected=true">';

@Injectable()
@LeaderElection(MARKUP, { lease: '3s' })
class MarkupElection {}

describe('status page in a browser (Debian chromium through playwright-core)', () => {
  it('lists the job with its run chart, pauses it after the confirmation, and loads nothing from elsewhere', async () => {
    const app = await startDashboardApp(redis.prefix, alice);
    running = { app };
    await app.admin.trigger(REPORT_JOB, { actor: 'setup' });
    await waitUntil(async () => (await app.admin.getJob(REPORT_JOB)).lastRun !== null, 'the run is in the history');
    const durationMs = (await app.admin.getJob(REPORT_JOB)).lastRun!.durationMs;

    const { page, traffic } = await openPage(app);
    const row = page.locator(`tr[data-job="${REPORT_JOB}"]`);
    await row.waitFor();
    expect(await row.locator('td').allTextContents()).toEqual([
      `${REPORT_JOB}on ${app.node}`,
      // The health column: the job ran, and its next occurrence is not due.
      expect.stringMatching(/^on-timelast success (now|\d+ s ago)$/),
      expect.stringMatching(/^0 0 0 1 1 \*cron/),
      expect.stringMatching(/^in \d+ d/),
      'free',
      'no',
      // Within half a second of the run the page says "now" instead of "N s ago".
      expect.stringMatching(new RegExp(`^succeeded\\d+ ms on ${app.node}, (now|\\d+ s ago)$`)),
      // The chart's scale: its full height is the longest run shown, here the one run.
      expect.stringMatching(new RegExp(`^succeeded, ${durationMs} ms, .*longest ${durationMs} ms$`)),
      'PauseTriggerUnlock',
    ]);
    expect(await row.locator('svg rect').count()).toBe(1);
    await page.locator(`tr[data-node="${app.node}"]`).waitFor();
    expect(await page.locator('#who').textContent()).toBe('signed in as alice@example.com');

    const dialogs: string[] = [];
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await row.getByRole('button', { name: 'Trigger' }).click();
    page.once('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    await row.getByRole('button', { name: 'Pause' }).click();

    await waitUntil(async () => (await app.admin.getJob(REPORT_JOB)).paused, 'the job is paused in Redis');
    await row.locator('td.paused', { hasText: 'by alice@example.com' }).waitFor();
    await row.getByRole('button', { name: 'Resume' }).waitFor();
    await page.locator('#message', { hasText: `${REPORT_JOB}: paused` }).waitFor();
    expect(dialogs).toEqual([`Trigger job "${REPORT_JOB}" on every node?`, `Pause job "${REPORT_JOB}" on every node?`]);
    expect((await app.admin.getJob(REPORT_JOB)).pause?.actor).toBe('alice@example.com');
    // The dismissed trigger sent nothing: the pause is the page's one POST.
    expect(traffic.requests.filter((request) => request.startsWith('POST'))).toEqual([
      `POST ${app.pageUrl}/api/jobs/${REPORT_JOB}/pause`,
    ]);
    expect(traffic.foreign).toEqual([]);
    expect(traffic.requests.every((request) => request.split(' ')[1].startsWith(`${app.origin}/`))).toBe(true);
    expect(traffic.errors).toEqual([]);
  });

  it('shows the holder, skips ticks as paused, resumes, triggers one run, and saves a screenshot', async () => {
    const app = await startDashboardApp(redis.prefix, alice, { withTickingJob: true });
    running = { app };
    const ticking = app.tickingJob!;
    const held = nextEvent(app.lockEvents.events$, jobEvent('started', TICKING_JOB));
    ticking.hold = deferred();
    await held;

    const { page, traffic } = await openPage(app);
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.accept();
    });
    const row = page.locator(`tr[data-job="${TICKING_JOB}"]`);
    const holderCell = row.locator('td').nth(4);
    const holderShown = new RegExp(`^${app.node}since .+ · until .+ · fencing token \\d+$`);
    await row.locator('td', { hasText: holderShown }).waitFor();
    expect(await holderCell.textContent()).toMatch(holderShown);
    // The API's ISO 8601 times read as dates: none shows as "Invalid Date" or NaN.
    expect(await page.locator('body').textContent()).not.toMatch(/Invalid Date|NaN/);
    expect(await row.getByRole('button', { name: 'Trigger' }).isDisabled()).toBe(true);
    ticking.hold.resolve();
    ticking.hold = undefined;
    await row.locator('td.muted', { hasText: /^free$/ }).waitFor();

    // Pause: from the next tick on, every tick is skipped as paused and none starts.
    const started: Date[] = [];
    const counting = app.lockEvents.events$.subscribe((event) => {
      if (jobEvent('started', TICKING_JOB)(event)) started.push(event.at);
    });
    await row.getByRole('button', { name: 'Pause' }).click();
    await waitUntil(async () => (await app.admin.getJob(TICKING_JOB)).paused, 'the job is paused in Redis');
    const startedBeforePause = started.length;
    const skipped = await events(app.lockEvents.events$, jobEvent('skipped', TICKING_JOB), 2);
    expect(skipped.map((event) => (event as { reason: string }).reason)).toEqual(['paused', 'paused']);
    expect(started.length).toBe(startedBeforePause);
    counting.unsubscribe();
    await row.locator('td.paused', { hasText: 'by alice@example.com' }).waitFor();

    // Resume: the next tick runs again.
    const runsAgain = nextEvent(app.lockEvents.events$, jobEvent('started', TICKING_JOB));
    await row.getByRole('button', { name: 'Resume' }).click();
    await runsAgain;
    await row.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await app.admin.getJob(TICKING_JOB)).paused).toBe(false);

    // Trigger the job that never ticks during a test: exactly one manual run, as alice.
    const reportRow = page.locator(`tr[data-job="${REPORT_JOB}"]`);
    await reportRow.getByRole('button', { name: 'Trigger' }).click();
    await page.locator('#message', { hasText: `${REPORT_JOB}: triggered: ` }).waitFor();
    await waitUntil(
      async () => (await app.admin.getJob(REPORT_JOB)).lastRun !== null,
      'the triggered run is in the history',
    );
    const runs = (await app.admin.history(REPORT_JOB, 50)).filter((entry) => entry.type === 'run');
    expect(runs).toEqual([
      expect.objectContaining({
        outcome: 'succeeded',
        manual: expect.objectContaining({ actor: 'alice@example.com' }),
      }),
    ]);
    expect(app.job.runs).toBe(1);
    await reportRow.locator('td.state-succeeded').waitFor();

    expect(dialogs).toEqual([
      `Pause job "${TICKING_JOB}" on every node?`,
      `Resume job "${TICKING_JOB}" on every node?`,
      `Trigger job "${REPORT_JOB}" on every node?`,
    ]);
    expect(traffic.foreign).toEqual([]);
    expect(traffic.errors).toEqual([]);

    // The screenshot: the ticking job held again, so its row shows the holder.
    const heldAgain = nextEvent(app.lockEvents.events$, jobEvent('started', TICKING_JOB));
    ticking.hold = deferred();
    await heldAgain;
    await row.locator('td', { hasText: holderShown }).waitFor();
    await mkdir(new URL('.', `file://${SCREENSHOT}`), { recursive: true });
    await page.screenshot({ path: SCREENSHOT, fullPage: true });
    expect(existsSync(SCREENSHOT)).toBe(true);
    if (process.env.UPDATE_SCREENSHOT === '1') {
      await mkdir(new URL('.', `file://${DOCS_SCREENSHOT}`), { recursive: true });
      await copyFile(SCREENSHOT, DOCS_SCREENSHOT);
    }
  });

  it('shows no button when read-only', async () => {
    const app = await startDashboardApp(redis.prefix, { ...alice, readOnly: true });
    running = { app };
    const { page, traffic } = await openPage(app);
    const row = page.locator(`tr[data-job="${REPORT_JOB}"]`);
    await row.waitFor();
    expect(await page.locator('#who').textContent()).toBe('signed in as alice@example.com (read-only)');
    expect(await page.locator('button').count()).toBe(0);
    expect(await page.locator('#jobs th').allTextContents()).not.toContain('Actions');
    expect(await row.locator('td').count()).toBe(8);
    expect(traffic.errors).toEqual([]);
  });

  it("shows each election's leader, term and since when, its name as text, never as markup", async () => {
    const app = await startDashboardApp(redis.prefix, alice, { providers: [MarkupElection] });
    running = { app };
    await waitUntil(async () => (await app.admin.election(MARKUP)).leader !== null, 'the node leads the election');
    const { term } = await app.admin.election(MARKUP);

    const { page, traffic } = await openPage(app);
    const row = page.locator('#elections tbody tr').first();
    await row.locator('td', { hasText: app.node }).waitFor();
    expect(await page.locator('#elections th').allTextContents()).toEqual(['Election', 'Leader', 'Term', 'Since']);
    expect(await row.locator('td').allTextContents()).toEqual([
      MARKUP,
      app.node,
      String(term),
      expect.stringMatching(/^(now|\d+ s ago)\d/), // relative, then the time in the browser's locale
    ]);
    expect(await row.getAttribute('data-election')).toBe(MARKUP);
    expect(await page.locator('#elections img').count()).toBe(0);
    expect(await page.evaluate(() => (globalThis as { injected?: boolean }).injected)).toBeUndefined();
    expect(traffic.errors).toEqual([]);
  });
});
