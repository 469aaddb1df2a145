import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { RedisTlsFiles } from './redis-server.js';

const run = promisify(execFile);

/** A throw-away CA and a server certificate it signed for 127.0.0.1 and localhost, as PEM files. */
export interface TestCertificates extends RedisTlsFiles {
  /** The CA certificate's PEM, for a client's `tls: { ca }`. */
  readonly ca: Buffer;
  /** Removes the files. */
  remove(): Promise<void>;
}

/**
 * Generates, with `openssl`, a CA and a server certificate signed by it (valid one day, for
 * `IP:127.0.0.1` and `DNS:localhost`, which Node checks against the host it connects to) into a new
 * temp dir. Each call makes a new CA: another call's CA does not vouch for this server.
 */
export async function createTestCertificates(): Promise<TestCertificates> {
  const dir = await mkdtemp(join(tmpdir(), 'nsl-tls-'));
  const file = (name: string) => join(dir, name);
  try {
    const key = ['-newkey', 'rsa:2048', '-nodes'];
    await run('openssl', [
      'req',
      '-x509',
      ...key,
      '-keyout',
      file('ca.key'),
      '-out',
      file('ca.crt'),
      '-days',
      '1',
      '-subj',
      '/CN=nest-scheduler-lock test CA',
    ]);
    await run('openssl', [
      'req',
      ...key,
      '-keyout',
      file('server.key'),
      '-out',
      file('server.csr'),
      '-subj',
      '/CN=localhost',
    ]);
    await writeFile(file('server.ext'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\n');
    await run('openssl', [
      ...[
        'x509',
        '-req',
        '-in',
        file('server.csr'),
        '-CA',
        file('ca.crt'),
        '-CAkey',
        file('ca.key'),
        '-CAcreateserial',
      ],
      ...['-out', file('server.crt'), '-days', '1', '-extfile', file('server.ext')],
    ]);
    return {
      caFile: file('ca.crt'),
      certFile: file('server.crt'),
      keyFile: file('server.key'),
      ca: await readFile(file('ca.crt')),
      remove: () => rm(dir, { recursive: true, force: true }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
