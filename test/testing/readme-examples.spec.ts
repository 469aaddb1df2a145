import { readFile } from 'node:fs/promises';
import * as prettier from 'prettier';
import { REPO, withJsExtensions } from '../support/doc-pages.js';

/**
 * The examples of docs/testing.md are what `npm run test:package` runs: the files of the `nest new` 11 (Jest,
 * CommonJS) and 12 (Vitest, ESM) apps under test/package/fixtures are its code blocks, formatted with the apps'
 * own Prettier options. The page writes them as the CommonJS app has them, relative imports without `.js` (which
 * Jest's CommonJS resolver of `nest new` 11 cannot map); the ESM app's add `.js`, and its spec is the Jest one with
 * `vi` in place of `jest`.
 */
const FIXTURES = `${REPO}test/package/fixtures/`;

/** The testing page's code blocks, by the file name of their first line (`// invoice.job.ts`); the first one. */
async function pageBlocks(): Promise<Map<string, string>> {
  const page = await readFile(`${REPO}docs/testing.md`, 'utf8');
  const blocks = new Map<string, string>();
  for (const [, file, code] of page.matchAll(/```ts\n\/\/ (\S+)\n([\s\S]*?)```/g)) {
    if (!blocks.has(file)) blocks.set(file, code);
  }
  return blocks;
}

/** `code` as the app's Prettier options (`.prettierrc` of `nest new`) print it. */
async function asTheAppPrintsIt(app: string, code: string): Promise<string> {
  const options = JSON.parse(await readFile(`${FIXTURES}${app}/.prettierrc`, 'utf8')) as prettier.Options;
  return prettier.format(code, { ...options, parser: 'typescript' });
}

const asWritten = (code: string) => code;
const withVitest = (code: string) => withJsExtensions(code).replace(/\bjest\./g, 'vi.');

describe('The examples of docs/testing.md', () => {
  it('import their files without `.js`, as Jest resolves them in a `nest new` 11 app', async () => {
    const imports = [...(await pageBlocks()).values()].flatMap((code) => [...code.matchAll(/from '(\.\/[^']+)'/g)]);
    expect(imports.map(([, path]) => path)).toEqual(['./invoice.job', './invoice.job', './invoice.nodes']);
  });

  it.each([
    ['nest11-jest', 'invoice.job.ts', 'invoice.job.ts', asWritten],
    ['nest11-jest', 'invoice.nodes.ts', 'invoice.nodes.ts', asWritten],
    ['nest11-jest', 'invoice.job.locking.spec.ts', 'invoice.job.locking.spec.ts', asWritten],
    ['nest12-vitest', 'invoice.job.ts', 'invoice.job.ts', withJsExtensions],
    ['nest12-vitest', 'invoice.nodes.ts', 'invoice.nodes.ts', withJsExtensions],
    ['nest12-vitest', 'invoice.job.locking.spec.ts', 'invoice.job.locking.spec.ts', withVitest],
  ])('are the files the %s app runs: src/%s', async (app, file, block, adapt) => {
    const code = (await pageBlocks()).get(block);
    expect(code).toBeDefined();
    const fixture = await readFile(`${FIXTURES}${app}/src/${file}`, 'utf8');
    expect(fixture).toBe(await asTheAppPrintsIt(app, adapt(code!)));
  });
});
