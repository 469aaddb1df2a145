import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import * as prettier from 'prettier';

/**
 * README's "Testing your jobs" examples are what `npm run test:package` runs: the files of the `nest new` 11
 * (Jest, CommonJS) and 12 (Vitest, ESM) apps under test/package/fixtures are its code blocks, formatted with the
 * apps' own Prettier options; the CommonJS app's relative imports have no `.js`, and the Vitest spec is the Jest
 * one with `vi` in place of `jest`.
 */
const REPO = fileURLToPath(new URL('../../', import.meta.url));
const FIXTURES = `${REPO}test/package/fixtures/`;

/** The README section's code blocks, by the file name of their first line (`// invoice.job.ts`); the first one. */
async function readmeBlocks(): Promise<Map<string, string>> {
  const readme = await readFile(`${REPO}README.md`, 'utf8');
  const section = readme.slice(readme.indexOf('## Testing your jobs'), readme.indexOf('## Production checklist'));
  const blocks = new Map<string, string>();
  for (const [, file, code] of section.matchAll(/```ts\n\/\/ (\S+)\n([\s\S]*?)```/g)) {
    if (!blocks.has(file)) blocks.set(file, code);
  }
  return blocks;
}

/** `code` as the app's Prettier options (`.prettierrc` of `nest new`) print it. */
async function asTheAppPrintsIt(app: string, code: string): Promise<string> {
  const options = JSON.parse(await readFile(`${FIXTURES}${app}/.prettierrc`, 'utf8')) as prettier.Options;
  return prettier.format(code, { ...options, parser: 'typescript' });
}

const withoutJsExtensions = (code: string) => code.replace(/(from '\.\/[^']+)\.js'/g, "$1'");
const withVitest = (code: string) => code.replace(/\bjest\./g, 'vi.');

describe("README's Testing your jobs examples", () => {
  it.each([
    ['nest11-jest', 'invoice.job.ts', 'invoice.job.ts', withoutJsExtensions],
    ['nest11-jest', 'invoice.nodes.ts', 'invoice.nodes.ts', withoutJsExtensions],
    ['nest11-jest', 'invoice.job.locking.spec.ts', 'invoice.job.locking.spec.ts', withoutJsExtensions],
    ['nest12-vitest', 'invoice.job.ts', 'invoice.job.ts', (code: string) => code],
    ['nest12-vitest', 'invoice.nodes.ts', 'invoice.nodes.ts', (code: string) => code],
    ['nest12-vitest', 'invoice.job.locking.spec.ts', 'invoice.job.locking.spec.ts', withVitest],
  ])('are the files the %s app runs: src/%s', async (app, file, block, adapt) => {
    const code = (await readmeBlocks()).get(block);
    expect(code).toBeDefined();
    const fixture = await readFile(`${FIXTURES}${app}/src/${file}`, 'utf8');
    expect(fixture).toBe(await asTheAppPrintsIt(app, adapt(code!)));
  });
});
