import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { jest } from '@jest/globals';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import * as Sentry from '@sentry/node';
import { LockEvents, SchedulerLock } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { compileKitNode } from '../support/kit-node.js';

/** The 2 s occurrences start here; the replicas start 100 ms before the first. */
const T0 = Date.parse('2027-01-01T00:00:00Z');
const OCCURRENCES = [0, 2, 4];

/** A check-in item of a Sentry envelope, as the SDK sends it. */
interface CheckIn {
  readonly check_in_id: string;
  readonly monitor_slug: string;
  readonly status: string;
}

/** What the local receiver got: Sentry's check-ins (from envelopes) and pings (`<method> <path>`), in order. */
const checkIns: CheckIn[] = [];
const pings: string[] = [];
/** Waiters for the receiver's counts, woken as requests arrive. */
const waiters = new Set<() => boolean>();
let receiver: Server;
let base = '';

/** The check-in items of an envelope: a header line, then per item a header line and a payload line. */
function checkInsOf(envelope: string): CheckIn[] {
  const lines = envelope.split('\n');
  return lines.flatMap((line, index) => {
    const header = index > 0 && line.startsWith('{') ? (JSON.parse(line) as { type?: string }) : {};
    return header.type === 'check_in' ? [JSON.parse(lines[index + 1]) as CheckIn] : [];
  });
}

/** Resolves once the receiver holds at least `sentry` check-ins and `pinged` pings. */
function received(sentry: number, pinged: number): Promise<void> {
  return new Promise((resolve) => {
    const done = () => checkIns.length >= sentry && pings.length >= pinged && (resolve(), true);
    if (!done()) waiters.add(done);
  });
}

/** The job checks in from its handler, which only the node that won the occurrence calls (as docs/health.md says). */
@Injectable()
class Report {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('*/2 * * * * *', { name: 'report' })
  async build() {
    await Sentry.withMonitor('report', async () => undefined);
  }
}

/** A Healthchecks.io-style ping from the lock events: `started` and `finished` come from the node that ran. */
@Injectable()
class PingOnRun implements OnModuleInit {
  constructor(private readonly events: LockEvents) {}

  onModuleInit() {
    this.events.events$.subscribe((event) => {
      if (event.jobName !== 'report') return;
      if (event.type === 'started') void fetch(`${base}/ping/report/start`, { method: 'POST' });
      if (event.type === 'finished') void fetch(`${base}/ping/report${event.error ? '/fail' : ''}`, { method: 'POST' });
    });
  }
}

const store = new TestLockProvider();
const apps: TestingModule[] = [];

beforeAll(async () => {
  receiver = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString();
      if (request.url?.includes('/envelope/')) checkIns.push(...checkInsOf(text));
      else pings.push(`${request.method} ${request.url}`);
      response.end('{}');
      for (const done of waiters) if (done()) waiters.delete(done);
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  const { port } = receiver.address() as AddressInfo;
  base = `http://127.0.0.1:${port}`;
  // One SDK for the three replicas: their check-ins meet in one Sentry project. Only the check-ins are under test.
  Sentry.init({
    dsn: `http://public@127.0.0.1:${port}/1`,
    defaultIntegrations: false,
    skipOpenTelemetrySetup: true,
    registerEsmLoaderHooks: false,
    sendClientReports: false,
  });
});
afterAll(async () => {
  await Sentry.close();
  await new Promise((resolve) => receiver.close(resolve));
});
afterEach(async () => {
  await Promise.all(apps.splice(0).map((app) => app.close()));
  jest.useRealTimers();
});

describe('check-ins from three replicas of a */2 s job, on fake time', () => {
  it('sends one Sentry check-in pair and one ping pair per occurrence, from the node that ran it', async () => {
    jest.useFakeTimers({ now: T0 - 100 });
    const nodes: TestNode[] = [];
    for (const node of ['replica-1', 'replica-2', 'replica-3']) {
      const app = await compileKitNode(store, node, [Report, PingOnRun]);
      apps.push(app);
      nodes.push(await SchedulerLockTest.node(app));
    }
    const outcomes: string[] = [];
    for (const [index, second] of OCCURRENCES.entries()) {
      // Each replica's tick of the occurrence, its clock a few ms apart from the others'.
      for (const [offset, node] of nodes.entries()) {
        jest.setSystemTime(T0 + second * 1_000 + 10 + offset);
        outcomes.push((await node.tick('report')).status);
      }
      await received(2 * (index + 1), 2 * (index + 1));
    }
    // Every envelope the SDK still holds is sent: nothing more arrives after this.
    jest.useRealTimers();
    expect(await Sentry.flush(5_000)).toBe(true);

    expect(outcomes).toEqual(Array(3).fill(['ran', 'skipped', 'skipped']).flat());
    const pairs = new Map<string, string[]>();
    for (const { check_in_id: id, monitor_slug: slug, status } of checkIns) {
      pairs.set(id, [...(pairs.get(id) ?? []), `${slug} ${status}`]);
    }
    expect([...pairs.values()]).toEqual(Array(3).fill(['report in_progress', 'report ok']));
    // The pings are sent without waiting, so a pair's two may arrive swapped.
    expect(pings.sort()).toEqual([...Array(3).fill('POST /ping/report'), ...Array(3).fill('POST /ping/report/start')]);
  });
});
