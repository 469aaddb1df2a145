import { filter, firstValueFrom, take, timeout, toArray, type Observable } from 'rxjs';
import type { LockEvent } from '../../lib/index.js';

/** The first event matching `match`, or a rejection after `ms`. Subscribe before causing the event. */
export function nextEvent<E extends LockEvent>(
  events$: Observable<LockEvent>,
  match: (event: LockEvent) => event is E,
  ms?: number,
): Promise<E>;
export function nextEvent(
  events$: Observable<LockEvent>,
  match: (event: LockEvent) => boolean,
  ms?: number,
): Promise<LockEvent>;
export function nextEvent(
  events$: Observable<LockEvent>,
  match: (event: LockEvent) => boolean,
  ms = 10_000,
): Promise<LockEvent> {
  return firstValueFrom(events$.pipe(filter(match), timeout(ms)));
}

/** The first `count` events matching `match`. */
export function events(
  events$: Observable<LockEvent>,
  match: (event: LockEvent) => boolean,
  count: number,
  ms = 10_000,
): Promise<LockEvent[]> {
  return firstValueFrom(events$.pipe(filter(match), take(count), toArray(), timeout(ms)));
}
