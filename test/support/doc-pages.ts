import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** The repository's root, where README.md and docs/ live. */
export const REPO = fileURLToPath(new URL('../../', import.meta.url));

/** The user docs whose code the tests check: README.md, then every docs/*.md page, by path from the root. */
export function docPages(): string[] {
  const pages = readdirSync(`${REPO}docs`).filter((name) => name.endsWith('.md'));
  return ['README.md', ...pages.sort().map((name) => `docs/${name}`)];
}

/**
 * `code` with `.js` on its relative imports (`./invoice.job` → `./invoice.job.js`), as an ES module needs them:
 * the testing page writes its files as a CommonJS app (`nest new` 11) imports them.
 */
export const withJsExtensions = (code: string): string => code.replace(/(from '\.\/[^']+?)(?<!\.js)';/g, "$1.js';");
