import { strict as assert } from 'node:assert';
import type { SimpleLock } from '../core/provider/lock-provider.js';
import type { JobLockClaim, JobLockProvider, OperatorLockProvider } from '../operators/operator-abilities.js';
import { isLocked, lockConfig, uniqueLockName } from './lock-probes.js';
import type { CheckDefinition } from './provider-subject.js';

/** The lock of a job-lock claim that the check needs to have won. */
export function won(claim: JobLockClaim, what: string): SimpleLock {
  if (!('lock' in claim)) throw new assert.AssertionError({ message: `${what}: got ${JSON.stringify(claim)}` });
  return claim.lock;
}

/** An operator's note, as the status page and the CLI write it. */
const NOTE = { actor: 'conformance-kit', reason: 'checking pause' };

/** `lockJob()`: a scheduled job's lock for one run, the same lock `lock()` takes. */
export const jobLockChecks: CheckDefinition<JobLockProvider>[] = [
  {
    name: "takes a job's lock for one run, refused as locked while another node holds it, the same lock as lock()",
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      const lock = won(await provider.lockJob(lockConfig(name), false), 'a free job lock');
      assert.deepEqual(await other.lockJob(lockConfig(name), false), { refused: 'locked' });
      assert.deepEqual(await other.lockJob(lockConfig(name), true), { refused: 'locked' }, 'a manual run');
      assert.equal(await isLocked(other, name), true, 'lock() took a name lockJob() holds');
      await lock.unlock();
      await won(await other.lockJob(lockConfig(name), false), 'the job lock after its unlock').unlock();
    },
  },
];

/** `lockJob()` with `operatorProvider()`: what an operator's pause and resume do to the job's locks. */
export const pauseChecks: CheckDefinition<JobLockProvider & OperatorLockProvider>[] = [
  {
    name: "refuses a paused job's ticks as paused, takes a manual run's lock anyway, and ticks again after resume",
    async run({ provider, other }) {
      const name = uniqueLockName('job');
      assert.equal(await provider.operatorProvider().pause(name, NOTE), true, 'pause() of a running job');
      assert.deepEqual(await other.lockJob(lockConfig(name), false), { refused: 'paused' });
      await won(await other.lockJob(lockConfig(name), true), "a manual run's lock while paused").unlock();
      assert.equal(await other.operatorProvider().resume(name, NOTE), true, 'resume() of a paused job');
      await won(await provider.lockJob(lockConfig(name), false), 'a tick after resume').unlock();
    },
  },
];
