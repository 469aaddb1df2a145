import { randomUUID } from 'node:crypto';
import type { OperatorAction } from '../core/task/lock-events.js';
import type { PauseState, OperatorEntry, OperatorNote, TriggerRequest } from './cluster-records.js';

/*
 * The records an operator action writes, built one way for every operator provider: what goes into
 * the job's history, a pause, a trigger request.
 */

/** The history entry of `action`, by `note`'s actor, now (unless `at` says when). */
export function operatorEntry(action: OperatorAction, note: OperatorNote, at = new Date()): OperatorEntry {
  return { type: action, actor: note.actor, reason: note.reason ?? null, at, formerNode: null };
}

/** A job's pause, from now on. */
export function pauseState(note: OperatorNote): PauseState {
  return { actor: note.actor, reason: note.reason ?? null, at: new Date() };
}

/** A new request that one node runs `jobName` now, with its own id. */
export function triggerRequest(jobName: string, note: OperatorNote): TriggerRequest {
  return { id: randomUUID(), jobName, actor: note.actor, reason: note.reason ?? null, at: new Date() };
}
