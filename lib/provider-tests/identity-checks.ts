import { strict as assert } from 'node:assert';
import { LockNotHeldError, type LockProvider } from '../core/provider/lock-provider.js';
import { FORCE_UNLOCK_TAG } from '../core/provider/owner-value.js';
import { canClaimOccurrences } from '../core/provider/provider-abilities.js';
import type { JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';
import { won } from './job-lock-checks.js';
import { isLocked, lockConfig, mustLock, uniqueLockName } from './lock-probes.js';
import { NODE_NAMES } from './node-names.js';
import type { CheckDefinition, CheckNodes } from './provider-subject.js';

/** Endings of the checks' lock names, so that job names like the store's markers are tried too. */
const LOCK_NAME_ENDINGS = ['', '|unlocked', ':owner:', ` ${FORCE_UNLOCK_TAG}`, "%_'", ' 日本'];

/** A node name as a failure quotes it: JSON, cut short when long. */
function quoted(node: string): string {
  return node.length > 60 ? `${JSON.stringify(node.slice(0, 60))}… (${node.length} chars)` : JSON.stringify(node);
}

/**
 * Runs `body` on a node named each of {@link NODE_NAMES} in turn, closed after it, with a lock name of its
 * own. A name the store refuses when the node is made (an error that names `node`) is not tried.
 */
async function forEachNodeName<P extends LockProvider>(
  nodes: CheckNodes<P>,
  body: (node: P, nodeName: string, lockName: string) => Promise<void>,
): Promise<void> {
  let tried = 0;
  for (const [index, nodeName] of NODE_NAMES.entries()) {
    const node = await nodes.connect(nodeName).catch((error: unknown) => {
      if (error instanceof Error && error.message.includes('node')) return undefined;
      throw error;
    });
    if (!node) continue;
    tried += 1;
    try {
      await body(node, nodeName, uniqueLockName('identity') + LOCK_NAME_ENDINGS[index % LOCK_NAME_ENDINGS.length]);
    } catch (error) {
      throw new Error(`node named ${quoted(nodeName)}: ${(error as Error).message}`, { cause: error });
    } finally {
      await nodes.close(node);
    }
  }
  assert.ok(tried > 0, 'the store refused every node name the check tried');
}

/** `lock()`: a node's name, whatever it is, cannot make its held lock free to another node. */
export const identityChecks: CheckDefinition[] = [
  {
    name: "no node name, however like the store's own markers, makes a held lock free to another node",
    async run(nodes) {
      await forEachNodeName(nodes, async (node, _lockedBy, lockName) => {
        const lock = await mustLock(node, lockConfig(lockName));
        assert.equal(await isLocked(nodes.other, lockName), true, 'another node took the held lock');
        await lock.unlock();
        assert.equal(await isLocked(nodes.other, lockName), false, 'the lock after its unlock');
      });
    },
  },
];

/**
 * `lockJob()` with `operatorProvider()`: whatever a node's name, its job lock is refused to other nodes, operators
 * read the name back as given, and their force-release still frees the lock.
 */
export const operatorIdentityChecks: CheckDefinition<JobLockProvider & OperatorLockProvider>[] = [
  {
    name: "no node name makes a job's lock read as free or as another's; operators read it as given and unlock it",
    async run(nodes) {
      const { other } = nodes;
      const operators = other.operatorProvider();
      await forEachNodeName(nodes, async (node, nodeName, lockName) => {
        const configuration = lockConfig(lockName);
        const lock = won(await node.lockJob(configuration, false), 'a free job lock');
        assert.deepEqual(await other.lockJob(configuration, false), { refused: 'locked' }, "another node's tick");
        assert.deepEqual(await other.lockJob(configuration, true), { refused: 'locked' }, 'a manual run');
        if (canClaimOccurrences(other)) {
          const claim = await other.lockOccurrence(configuration, new Date());
          assert.deepEqual(claim, { refused: 'locked' }, "another node's claim of an occurrence");
        }
        assert.equal((await operators.lockState(lockName)).holder?.node, nodeName, 'the holder operators read');

        assert.equal(await operators.unlock(lockName, { actor: nodeName }), nodeName, 'the former holder unlock names');
        const [entry] = await operators.history(lockName, 1);
        assert.deepEqual([entry?.type, entry && 'formerNode' in entry && entry.formerNode], ['unlock', nodeName]);
        assert.equal((await operators.lockState(lockName)).holder, null, 'the lock after its force-release');
        const next = won(await other.lockJob(configuration, false), 'the job lock after its force-release');
        await assert.rejects(lock.unlock(), LockNotHeldError, "the force-released holder's unlock()");
        await next.unlock();
      });
    },
  },
];
