import type { BlockedMessage, StartMessage, WorkerMessage } from './fixtures/worker-protocol.js';

/** Matches the `start` of a run of `job` that also satisfies `where`; for `WorkerCluster.waitFor`. */
export function isStartOf(job: string, where: (start: StartMessage) => boolean = () => true) {
  return (message: WorkerMessage): message is StartMessage =>
    message.kind === 'start' && message.job === job && where(message);
}

/** Matches the report of a worker whose event loop was stalled (see `EventLoopBlock`). */
export function isBlocked(message: WorkerMessage): message is BlockedMessage {
  return message.kind === 'blocked';
}
