import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Injectable, type OnModuleInit } from '@nestjs/common';
import { Cron } from '@nestjs/schedule';
import type { TestingModule } from '@nestjs/testing';
import { currentLock, LockEvents, SchedulerLock } from '../../lib/index.js';
import { SchedulerLockTest, TestLockProvider, type TestNode } from '../../lib/testing/index.js';
import { compileKitNode } from '../support/kit-node.js';

/** New Year's midnight, UTC, from 2027 on: the job's fire times, which no real timer reaches during the test. */
const newYear = (year: number) => Date.UTC(2027 + year, 0, 1);

/** Every request the receiver got, as `<method> <path>`, in order. */
const received: string[] = [];
let receiver: Server;
let base = '';

/**
 * Sentry Crons' check-in pair around `work`, as `Sentry.withMonitor(slug, work)` of `@sentry/nestjs` sends it:
 * `in_progress` before, `ok` or `error` after. A stand-in that posts to the local receiver instead of Sentry.
 */
async function withMonitor<T>(slug: string, work: () => Promise<T>): Promise<T> {
  const checkIn = (status: string) => fetch(`${base}/sentry/${slug}/${status}`, { method: 'POST' });
  await checkIn('in_progress');
  try {
    const result = await work();
    await checkIn('ok');
    return result;
  } catch (error) {
    await checkIn('error');
    throw error;
  }
}

/** The job checks in from its handler, which only the node that ran the occurrence calls. */
@Injectable()
class Report {
  @SchedulerLock({ lockAtMostFor: '1m' })
  @Cron('0 0 0 1 1 *', { name: 'report', timeZone: 'UTC' })
  async build() {
    await withMonitor('report', async () => currentLock()!.occurrence);
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
    received.push(`${request.method} ${request.url}`);
    response.end('OK');
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await Promise.all(apps.map((app) => app.close()));
  await new Promise((resolve) => receiver.close(resolve));
});

/** Resolves once the receiver has `count` requests. */
async function receivedCount(count: number): Promise<void> {
  while (received.length < count) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('check-ins from three replicas', () => {
  it('sends one Sentry check-in pair and one ping pair per occurrence, from the node that ran it', async () => {
    const nodes: TestNode[] = [];
    for (const node of ['replica-1', 'replica-2', 'replica-3']) {
      const app = await compileKitNode(store, node, [Report, PingOnRun]);
      apps.push(app);
      nodes.push(await SchedulerLockTest.node(app));
    }
    const outcomes: string[] = [];
    for (const year of [0, 1, 2]) {
      // Each replica's tick of the occurrence, its clock a few ms apart from the others'.
      for (const [index, node] of nodes.entries()) {
        const { status } = await node.tick('report', { at: new Date(newYear(year) + index) });
        outcomes.push(status);
      }
    }
    await receivedCount(12);
    expect(outcomes.filter((status) => status === 'ran')).toHaveLength(3);
    expect(outcomes.filter((status) => status === 'skipped')).toHaveLength(6);
    // The handler awaits its check-ins in order; the pings are sent without waiting, so they may arrive swapped.
    const sentry = received.filter((request) => request.includes('/sentry/'));
    expect(sentry).toEqual(Array(3).fill(['POST /sentry/report/in_progress', 'POST /sentry/report/ok']).flat());
    const pings = received.filter((request) => request.includes('/ping/')).sort();
    expect(pings).toEqual([...Array(3).fill('POST /ping/report'), ...Array(3).fill('POST /ping/report/start')]);
    expect(received).toHaveLength(12);
  });
});
