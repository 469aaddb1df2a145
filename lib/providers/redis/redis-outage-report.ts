import type { SchedulerLockLogger } from '../../core/executor/logger.js';
import { LockProviderUnavailableError } from '../../core/provider/errors.js';
import { OutageLines } from '../../core/provider/outage-lines.js';
import type { ProviderOutageMonitor } from '../../core/provider/store-outage-report.js';
import { describeRedisEndpoint } from './redis-endpoint.js';
import { connectionFailure, failedForNoConnection, RedisCommandRefusedError } from './redis-failures.js';
import type { RedisClient } from './redis-client.js';

/** A listener of the client's `ready`, `close` and `error` events (only `error` passes an argument). */
type Listener = (error: Error) => void;

/**
 * One error line when Redis becomes unreachable — the endpoint, the cause, that locked ticks are
 * skipped and how many locked jobs the app has — and one line when it is back, with how long it was
 * out. The node's calls to Redis that fail meanwhile (lock attempts, renewals, heartbeats, trigger
 * polls) log nothing of their own.
 *
 * The outage is learnt from the client's connection events (the cause is the first failed
 * reconnection: refused, timed out, authentication, TLS) and from calls that fail while the
 * connection looks fine: a Redis that answers it cannot serve (`LOADING`), or one that stopped
 * answering, whose cause is the call's timeout once a second call, sent after the first timed out,
 * goes unanswered too, or once calls have failed for `OUTAGE_MS` (one slow answer is no outage;
 * the rule: `OutageLines`).
 *
 * A command Redis refuses to the client's user (its ACL) is no outage: Redis answers, and the jobs
 * whose locks need other commands go on. Each refusal gets one error line — the endpoint, the refused
 * command and the user — for as long as the connection lasts, however many attempts it fails.
 */
export class RedisOutageReport implements ProviderOutageMonitor {
  private readonly endpoint: string;
  private readonly listeners: [event: string, listener: Listener][];
  /** The connection is ready, as far as the client's events tell. */
  private connected: boolean;
  private readonly lines: OutageLines;
  /** The users whose refusal was logged on this connection: one line per user, as one ACL is at fault. */
  private readonly refusals = new Set<string>();

  constructor(
    private readonly client: RedisClient,
    private readonly logger: SchedulerLockLogger,
  ) {
    this.endpoint = describeRedisEndpoint(client);
    this.lines = new OutageLines(`Redis ${this.endpoint}`, logger);
    this.connected = client.status === 'ready';
    this.listeners = [
      ['ready', () => this.ready()],
      ['close', () => this.lost()],
      ['error', (error: Error) => this.connectionFailed(error)],
    ];
    for (const [event, listener] of this.listeners) client.on(event, listener);
  }

  /** The app has started: an outage already under way is reported now, with the number of locked jobs. */
  start(lockedJobs: () => number): void {
    this.lines.start(lockedJobs);
  }

  /** Stops listening: the client may be the app's own, and closing it is no outage. */
  close(): void {
    for (const [event, listener] of this.listeners) this.client.off(event, listener);
    this.lines.stop();
  }

  failed(error: unknown, sentAt?: number): boolean {
    if (error instanceof RedisCommandRefusedError) {
      this.refused(error);
      return true;
    }
    if (!(error instanceof LockProviderUnavailableError)) return false;
    if (this.lines.ended(sentAt)) return true;
    // A ready Cluster that fails one lock lost a node, not the store: those are per-lock errors.
    if (this.client.isCluster && this.client.status === 'ready') return false;
    // With the connection up, a call that got no answer in time may have met a slow Redis, not a gone one.
    if (this.connected && error.unanswered) {
      this.lines.unanswered(error.reason, sentAt);
      return true;
    }
    // With the connection lost, the next failed reconnection names the cause (an attempt would only
    // say "not connected"; it is the cause once the outage has lasted OUTAGE_MS); with the connection up,
    // Redis answered that it cannot serve now (`LOADING`…) and the call says so. A call failed for want
    // of a connection says only that, even before the client's `close` event came.
    this.lines.began();
    if (this.connected && !failedForNoConnection(error)) this.lines.causedBy(error.reason);
    this.lines.failedFor(error.reason);
    return true;
  }

  answered(): void {
    if (this.connected) this.lines.back();
  }

  private ready(): void {
    this.connected = true;
    // A new connection (a restarted server may have loaded another ACL): a refusal is news again.
    this.refusals.clear();
    this.lines.back();
  }

  private lost(): void {
    this.connected = false;
    this.lines.began();
  }

  private connectionFailed(error: Error): void {
    // An error on a live connection (a reset) is followed by its close; the reconnection says why.
    if (this.client.status === 'ready') return;
    this.lost();
    // A Cluster that reached no node says why in its last node's error.
    const nodeError = (error as { lastNodeError?: unknown }).lastNodeError;
    const nodeFailure = nodeError instanceof Error ? connectionFailure(nodeError, this.client) : undefined;
    this.lines.causedBy(connectionFailure(error, this.client) ?? nodeFailure ?? error.message);
  }

  private refused(refusal: RedisCommandRefusedError): void {
    if (this.refusals.has(refusal.user)) return;
    this.refusals.add(refusal.user);
    this.logger.error(
      `${refusal.message}; calls that need it fail, and locked ticks are skipped, until the user's ACL allows it`,
    );
  }
}
