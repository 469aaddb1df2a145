import { describeLockProvider } from '../../lib/provider-tests/index.js';
import { postgresSubject } from './postgres-fixture.js';

const subject = postgresSubject('conformance');
afterAll(() => subject.close());

describeLockProvider(subject, { describe, it, concurrent: it.concurrent });
