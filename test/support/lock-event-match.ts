import type { LockEvent } from '../../lib/index.js';
import type { LockEventType } from '../../lib/core/task/lock-events.js';

/** The event variant of one `type`. */
export type LockEventOf<T extends LockEventType> = Extract<LockEvent, { type: T }>;

/** A type guard for `nextEvent` / `events`: events of `type` emitted for the scheduler job `jobName`. */
export function jobEvent<T extends LockEventType>(
  type: T,
  jobName: string,
): (event: LockEvent) => event is LockEventOf<T> {
  return (event): event is LockEventOf<T> => event.type === type && event.jobName === jobName;
}
