import { randomUUID } from 'node:crypto';
import type { SteeringAction } from '../core/task/lock-events.js';
import type { PauseState, SteeringEntry, SteeringNote, TriggerRequest } from './cluster-records.js';

/*
 * The records an operator's steering action writes, built one way for every operator store: what goes into
 * the job's history, a pause, a trigger request.
 */

/** The history entry of `action`, by `note`'s actor, now (epoch ms, unless `at` says when). */
export function steeringEntry(action: SteeringAction, note: SteeringNote, at = Date.now()): SteeringEntry {
  return { type: action, actor: note.actor, reason: note.reason, at };
}

/** A job's pause, from now on. */
export function pauseState(note: SteeringNote): PauseState {
  return { actor: note.actor, reason: note.reason, at: Date.now() };
}

/** A new request that one node runs `jobName` now, with its own id. */
export function triggerRequest(jobName: string, note: SteeringNote): TriggerRequest {
  return { id: randomUUID(), jobName, actor: note.actor, reason: note.reason, at: Date.now() };
}
