import { fileURLToPath } from 'node:url';
import { TIERS, specsOf } from './test/tiers.mjs';

const testDir = fileURLToPath(new URL('./test/', import.meta.url));

/** What every tier shares: ES modules compiled by ts-jest, imports written with their `.js` suffix. */
const project = {
  testEnvironment: 'node',
  runner: '<rootDir>/test/support/esm-test-runner.cjs',
  extensionsToTreatAsEsm: ['.ts'],
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  transform: { '^.+\\.ts$': ['ts-jest', { useESM: true, tsconfig: 'tsconfig.json' }] },
  modulePathIgnorePatterns: ['<rootDir>/.build/', '<rootDir>/dist/'],
  // Once per run, whichever tiers run: the run's dir, and the servers made once for the run stopped at its end.
  globalSetup: '<rootDir>/test/support/run-dir-setup.cjs',
  globalTeardown: '<rootDir>/test/support/run-dir-teardown.cjs',
};

/** One Jest project per tier (test/tiers.mjs); `npm test` runs them all, `--selectProjects <tier>` one. */
export default {
  globalSetup: '<rootDir>/test/support/embed-assets-setup.cjs',
  testTimeout: 30_000,
  reporters: ['default', '<rootDir>/test/support/summary-reporter.cjs'],
  projects: TIERS.map((tier) => ({
    ...project,
    displayName: tier,
    testMatch: specsOf(tier, testDir).map((spec) => `<rootDir>/test/${spec}`),
  })),
};
