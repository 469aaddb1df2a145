import type { Contender } from '../contenders/contender.js';
import { countCommands } from './command-counter.js';

/** Average Redis commands per operation of one contender, and the command names it sent. */
export interface CommandUsage {
  readonly acquire: number;
  readonly release: number;
  readonly failedAttempt: number;
  readonly names: readonly string[];
}

/**
 * Counts the commands of `samples` sequential cycles (split at the moment the lock is held) and
 * `samples` failed attempts of worker 0, on the contender's own client, outside any timed section.
 * One uncounted cycle and attempt go first: the steady state is the claim, not a first call that
 * loads a script (EVALSHA answered NOSCRIPT, then EVAL).
 */
export async function measureCommandUsage(contender: Contender, samples: number): Promise<CommandUsage> {
  await contender.cycle(0);
  await contender.attemptHeld(0);
  const counter = countCommands(contender.client);
  try {
    let acquire = 0;
    let release = 0;
    for (let i = 0; i < samples; i++) {
      const before = counter.total;
      let whenHeld = Number.NaN;
      await contender.cycle(0, () => {
        whenHeld = counter.total;
      });
      acquire += whenHeld - before;
      release += counter.total - whenHeld;
    }
    const beforeAttempts = counter.total;
    for (let i = 0; i < samples; i++) await contender.attemptHeld(0);
    return {
      acquire: acquire / samples,
      release: release / samples,
      failedAttempt: (counter.total - beforeAttempts) / samples,
      names: [...counter.byName.keys()],
    };
  } finally {
    counter.uninstall();
  }
}
