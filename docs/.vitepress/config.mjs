/**
 * VitePress's settings for the docs site (`npx vitepress dev docs` once VitePress is a dev dependency; it is not
 * one yet). The sidebar is read from docs/index.md, the one list of pages: each `## Section` and its
 * `- [Title](page.md)` lines.
 */
import { readFileSync } from 'node:fs';

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
  // Links out of docs/ (../SECURITY.md) are files of the repository, not pages of the site.
  ignoreDeadLinks: [(url) => url.startsWith('../')],
  themeConfig: {
    sidebar: sidebar(index),
    search: { provider: 'local' },
  },
};
