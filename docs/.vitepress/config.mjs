/**
 * VitePress's settings for the docs site (`npm run docs:dev`, `npm run docs:build`). The sidebar is read from
 * docs/index.md, the one list of pages: each `## Section` and its `- [Title](page.md)` lines; the API reference
 * (TypeDoc, docs/.vitepress/api-reference.mjs) follows.
 */
import { readFileSync } from 'node:fs';
import { referenceSidebar, sourceLinksToReference } from './api-reference.mjs';

const index = readFileSync(new URL('../index.md', import.meta.url), 'utf8');

/** docs/index.md's sections, as VitePress sidebar groups. */
function sidebar(markdown) {
  const groups = [];
  for (const line of markdown.split('\n')) {
    const section = /^## (.+)$/.exec(line)?.[1];
    if (section) groups.push({ text: section, items: [] });
    const page = /^- \[([^\]]+)\]\(([\w-]+)\.md\)/.exec(line);
    if (page && groups.length > 0) groups.at(-1).items.push({ text: page[1], link: `/${page[2]}` });
  }
  return groups;
}

export default {
  title: 'nest-scheduler-lock',
  description: 'Run @nestjs/schedule jobs once across a cluster',
  cleanUrls: true,
  // Without an icon, every page asks for /favicon.ico and logs its 404.
  head: [['link', { rel: 'icon', type: 'image/svg+xml', href: '/favicon.svg' }]],
  // Links out of docs/ (../SECURITY.md, which VitePress sees as ./../SECURITY) are files of the repository, not
  // pages of the site.
  ignoreDeadLinks: [(url) => /^(\.\/)?\.\.\//.test(url)],
  markdown: { config: sourceLinksToReference },
  themeConfig: {
    sidebar: [...sidebar(index), referenceSidebar()],
    search: { provider: 'local' },
  },
};
