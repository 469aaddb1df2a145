/**
 * TypeDoc's settings for the API reference (`npm run docs:api`): HTML in docs/public/api, which VitePress copies
 * into the site as it is. One module per entry point of package.json `exports`, named by its import path.
 */
import { readFileSync } from 'node:fs';

const { exports } = JSON.parse(readFileSync(new URL('package.json', import.meta.url), 'utf8'));

/** The TypeScript source of each entry point: `./dist/cjs/providers/postgres/index.d.ts` → `lib/providers/postgres/index.ts`. */
const entryPoints = Object.values(exports)
  .filter((entry) => typeof entry === 'object')
  .map((entry) => entry.require.types.replace('./dist/cjs/', 'lib/').replace(/\.d\.ts$/, '.ts'));

export default {
  entryPoints,
  tsconfig: 'tsconfig.build.json',
  out: 'docs/public/api',
  name: 'nest-scheduler-lock API',
  readme: 'none',
  excludeInternal: true,
  excludePrivate: true,
  excludeProtected: true,
  githubPages: false,
  // tsc checks the sources (npm run build, npm run typecheck); the reference only reads them: 3x faster.
  skipErrorChecking: true,
  favicon: 'docs/public/favicon.svg',
  // The sources are lib/ of the repository, which the site does not serve.
  disableSources: true,
  // Types a public one mentions but the package keeps to itself (DurationString, LockDefaults…) are left out.
  validation: { notExported: false },
};
