import type { LockProvider } from '../core/provider/lock-provider.js';
import type { CheckDefinition, LockProviderSubject } from './provider-subject.js';
import { REAL_CLOCK } from './timing.js';

/**
 * Runs `check` on fresh nodes of `subject`, narrowed to the ability `has` checks for, and closes every
 * node it made afterwards, whether the check passed or not.
 */
export async function runOnNodes<P extends LockProvider>(
  subject: LockProviderSubject,
  has: (provider: LockProvider) => provider is P,
  check: CheckDefinition<P>,
): Promise<void> {
  const made: LockProvider[] = [];
  const connect = async (nodeName?: string): Promise<P> => {
    const node = await subject.create(nodeName);
    made.push(node);
    if (!has(node)) throw new Error(`${subject.name}: a node create() made lacks the ability its class has`);
    return node;
  };
  const close = async (node: LockProvider) => {
    const index = made.indexOf(node);
    if (index >= 0) await subject.cleanup?.(made.splice(index, 1)[0]);
  };
  try {
    const [provider, other] = [await connect(), await connect()];
    const timing = {
      shortLock: subject.shortLock ?? 50,
      clockTolerance: subject.clockTolerance ?? 5,
      clock: subject.clock ?? REAL_CLOCK,
    };
    await check.run({ provider, other, connect, close, ...timing });
  } finally {
    await Promise.all(made.map(async (node) => subject.cleanup?.(node)));
  }
}
