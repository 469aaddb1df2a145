import { startPrivateRedisServer, type PrivateRedisServer } from '../support/redis-server.js';
import { uniquePrefix } from '../support/shared-redis.js';
import { createTestCertificates, type TestCertificates } from '../support/tls-certificates.js';
import { runCli } from './support/run-cli.js';

let certificates: TestCertificates;
let server: PrivateRedisServer;

beforeAll(async () => {
  certificates = await createTestCertificates();
  server = await startPrivateRedisServer({ tls: certificates, requirepass: 'tls-secret' });
});
afterAll(async () => {
  await server?.stop();
  await certificates?.remove();
});

describe('nest-scheduler-lock on a TLS-only Redis (rediss://)', () => {
  it('connects with the CA given to Node (NODE_EXTRA_CA_CERTS), and fails on one line without it', async () => {
    const prefix = uniquePrefix('cli-tls');
    const url = `rediss://:tls-secret@127.0.0.1:${server.port}`;
    expect(
      await runCli(['nodes', '--redis', url, '--prefix', prefix], { NODE_EXTRA_CA_CERTS: certificates.caFile }),
    ).toEqual({
      code: 0,
      stdout: `No live node under the key prefix "${prefix}".\n`,
      stderr: '',
    });

    const untrusted = await runCli(['nodes', '--redis', url, '--prefix', prefix]);
    expect({ code: untrusted.code, stdout: untrusted.stdout }).toEqual({ code: 1, stdout: '' });
    expect(untrusted.stderr).toMatch(
      new RegExp(
        `^nest-scheduler-lock: Redis 127\\.0\\.0\\.1:${server.port} is reachable, but TLS certificate not trusted: [^\\n]+\\n$`,
      ),
    );
    expect(untrusted.stderr).not.toContain('tls-secret');
  });
});
