/**
 * The API reference as the site sees it: TypeDoc's HTML in docs/public/api (`npm run docs:api`), which VitePress
 * copies as it is. Its pages leave the VitePress app, so every link to them has `target: '_self'`.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';

const PACKAGE = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8'));
const OUT = new URL('../public/api/', import.meta.url);
/** TypeDoc's folders of symbol pages, each named `<module>.<Symbol>.html`. */
const KINDS = ['classes', 'interfaces', 'types', 'functions', 'variables', 'enums'];
const MAIN = PACKAGE.name;

/** The sidebar group: one page per entry point of package.json `exports`, named by its import path. */
export function referenceSidebar() {
  const entries = Object.keys(PACKAGE.exports).filter((key) => key !== './package.json');
  const items = entries.map((key) => {
    const name = key === '.' ? MAIN : `${MAIN}/${key.slice(2)}`;
    return { text: name, link: `/api/modules/${name.replace(/\//g, '_')}.html`, target: '_self' };
  });
  return { text: 'API reference', collapsed: true, items };
}

/** Each exported symbol's page, by name; a name two entry points export goes to the main entry's page. */
function symbolPages() {
  const pages = new Map();
  for (const kind of KINDS.filter((kind) => existsSync(new URL(kind, OUT)))) {
    for (const file of readdirSync(new URL(kind, OUT))) {
      const [, module, symbol] = /^(.+)\.([^.]+)\.html$/.exec(file);
      if (!pages.has(symbol) || module === MAIN) pages.set(symbol, `/api/${kind}/${file}`);
    }
  }
  return pages;
}

/**
 * A markdown-it plugin: a link to a source file whose text is a symbol, ``[`SchedulerLockModuleOptions`](../lib/….ts)``,
 * opens that file's TSDoc on GitHub and the symbol's reference page on the site. A symbol the reference lacks
 * fails the build.
 */
export function sourceLinksToReference(md) {
  const pages = symbolPages();
  md.core.ruler.push('source-links-to-reference', (state) => {
    for (const token of state.tokens.filter((token) => token.type === 'inline')) {
      token.children.forEach((link, index) => {
        const href = link.type === 'link_open' ? link.attrGet('href') : null;
        if (!href || !/^(\.\.\/)+lib\/.+\.ts$/.test(href)) return;
        const symbol = token.children[index + 1]?.type === 'code_inline' ? token.children[index + 1].content : '';
        const page = pages.get(symbol);
        if (!page) throw new Error(`${state.env.relativePath}: link to ${href}: "${symbol}" has no API reference page`);
        link.attrSet('href', page);
        link.attrSet('target', '_self');
      });
    }
  });
}
