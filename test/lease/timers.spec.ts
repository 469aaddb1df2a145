import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const FIXTURE = fileURLToPath(new URL('../../.build/test/lease/fixtures/exits-when-idle.js', import.meta.url));

describe('timers of the lock layer', () => {
  it('never keep the process alive: a script that leaves an executor behind exits on its own once its work is done', async () => {
    const started = performance.now();
    const child = spawn(process.execPath, [FIXTURE], { stdio: ['ignore', 'pipe', 'inherit'] });
    let output = '';
    child.stdout.on('data', (chunk) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => {
      // The renewing lock's keeper, the plain lock's deadline (an hour away) and the attempt sweep
      // were all armed; if any were not unref'd the child would still be running after this.
      const stuck = setTimeout(() => child.kill('SIGKILL'), 5_000);
      child.on('exit', (exitCode) => {
        clearTimeout(stuck);
        resolve(exitCode);
      });
    });
    expect(output.trim()).toBe('done');
    expect(code).toBe(0);
    expect(performance.now() - started).toBeLessThan(5_000);
  });
});
