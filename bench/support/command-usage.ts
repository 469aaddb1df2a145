import type { Contender } from '../contenders/contender.js';
import { countCommands } from './command-counter.js';

/** Average commands (Redis) or statements (PostgreSQL) per operation of one contender, and their names. */
export interface CommandUsage {
  readonly acquire: number;
  readonly release: number;
  readonly failedAttempt: number;
  readonly names: readonly string[];
}

/** What {@link measureUsage} drives: a take-and-release of worker 0's free lock, and an attempt at its held one. */
export type CountedContender = Pick<Contender, 'cycle' | 'attemptHeld'>;

/**
 * Counts what `samples` sequential cycles (split at the moment the lock is held) and `samples` failed
 * attempts of worker 0 send, as `sent()` reads it, outside any timed section. Warm the contender up first
 * ({@link warmUp}): the steady state is the claim, not a first call that loads a script (EVALSHA answered
 * NOSCRIPT, then EVAL) or prepares a statement.
 */
export async function measureUsage(
  contender: CountedContender,
  samples: number,
  sent: () => number,
): Promise<Omit<CommandUsage, 'names'>> {
  let acquire = 0;
  let release = 0;
  for (let i = 0; i < samples; i++) {
    const before = sent();
    let whenHeld = Number.NaN;
    await contender.cycle(0, () => {
      whenHeld = sent();
    });
    acquire += whenHeld - before;
    release += sent() - whenHeld;
  }
  const beforeAttempts = sent();
  for (let i = 0; i < samples; i++) await contender.attemptHeld(0);
  return { acquire: acquire / samples, release: release / samples, failedAttempt: (sent() - beforeAttempts) / samples };
}

/** One uncounted cycle and failed attempt of worker 0. */
export async function warmUp(contender: CountedContender): Promise<void> {
  await contender.cycle(0);
  await contender.attemptHeld(0);
}

/** {@link measureUsage} of a Redis contender, on its own client. */
export async function measureCommandUsage(contender: Contender, samples: number): Promise<CommandUsage> {
  await warmUp(contender);
  const counter = countCommands(contender.client);
  try {
    const usage = await measureUsage(contender, samples, () => counter.total);
    return { ...usage, names: [...counter.byName.keys()] };
  } finally {
    counter.uninstall();
  }
}
