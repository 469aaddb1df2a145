/**
 * Checks the user docs (README.md, docs/*.md, SECURITY.md, CHANGELOG.md) for what keeps them short and whole:
 * - the median sentence of README.md and docs/*.md is at most 20 words, and none over 25 (prose only: code and
 *   tables are left out);
 * - every relative link and `#anchor` resolves to a file and a heading;
 * - no `test/` path outside docs/verification.md (and CONTRIBUTING.md), and no tracker number (`#12`, "issue 12");
 * - README.md has at most 300 lines, the install line in its first 40 and the `@SchedulerLock` example in its first 60;
 * - docs/index.md lists every docs page.
 * Run: `npm run docs:check` (also part of `npm run lint`). Prints the median; exits 1 with every problem found.
 */
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const MAX_MEDIAN_WORDS = 20;
const README_MAX_LINES = 300;
/** Pages that may name test files: the one that maps guarantees to tests, and the contributors' guide. */
const MAY_NAME_TESTS = new Set(['docs/verification.md', 'CONTRIBUTING.md']);

const docsPages = readdirSync(join(ROOT, 'docs'))
  .filter((name) => name.endsWith('.md'))
  .map((name) => `docs/${name}`);
/** The pages whose sentences are measured, and the ones whose links and paths are checked too. */
const PROSE = ['README.md', ...docsPages];
const CHECKED = [...PROSE, 'SECURITY.md', 'CHANGELOG.md', 'CONTRIBUTING.md'].filter((page) =>
  existsSync(join(ROOT, page)),
);

const read = (page) => readFileSync(join(ROOT, page), 'utf8');

/** The page's lines outside fenced code blocks, each with its line number. */
function proseLines(text) {
  const lines = [];
  let fence = null;
  text.split('\n').forEach((line, index) => {
    const marker = /^\s*(```+|~~~+)/.exec(line)?.[1];
    if (marker && (fence === null || marker.startsWith(fence))) {
      fence = fence === null ? marker : null;
      return;
    }
    if (fence === null) lines.push({ line, number: index + 1 });
  });
  return lines;
}

/** Words of a piece of prose: inline code counts as one word, a link as its text. */
function words(text) {
  const plain = text
    .replace(/`[^`]*`/g, 'code')
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, ' ');
  return plain.split(/\s+/).filter((word) => /[\p{L}\p{N}]/u.test(word)).length;
}

/** Sentences of a page's prose: paragraphs and list items, split after `.`, `!`, `?` or `:` before a capital. */
function sentences(text) {
  const blocks = [];
  let current = [];
  const flush = () => {
    if (current.length > 0) blocks.push(current.join(' '));
    current = [];
  };
  for (const { line } of proseLines(text)) {
    const trimmed = line.trim();
    const skipped = ['|', '#', '<!--', '!['].some((start) => trimmed.startsWith(start));
    if (trimmed === '' || skipped) {
      flush();
      continue;
    }
    if (/^([-*+]|\d+\.)\s/.test(trimmed)) flush();
    current.push(trimmed.replace(/^([-*+]|\d+\.)\s+(\[[ x]\]\s+)?/, ''));
  }
  flush();
  return blocks
    .flatMap((block) => block.replace(/`[^`]*`/g, (code) => code.replace(/[.!?:]/g, '_')).split(/(?<=[.!?]\**)\s+/))
    .map((text) => ({ text, count: words(text) }))
    .filter(({ count }) => count > 0);
}

/** GitHub's anchors of a Markdown page's headings. */
function anchors(text) {
  const seen = new Map();
  const result = new Set();
  for (const { line } of proseLines(text)) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const slug = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    result.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return result;
}

const problems = [];

function checkLinks(page) {
  for (const { line, number } of proseLines(read(page))) {
    const withoutCode = line.replace(/`[^`]*`/g, '');
    for (const [, target] of withoutCode.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
      if (/^[a-z][a-z+.-]*:/i.test(target)) continue; // https:, mailto:
      const [path, anchor] = target.split('#');
      const file = path === '' ? join(ROOT, page) : join(ROOT, dirname(page), path);
      const where = `${page}:${number}`;
      if (!existsSync(file)) {
        problems.push(`${where}: link to ${target}: no file ${relative(ROOT, file)}`);
        continue;
      }
      if (anchor === undefined) continue;
      if (statSync(file).isDirectory() || !file.endsWith('.md')) {
        problems.push(`${where}: link to ${target}: an anchor into something that is not a Markdown page`);
      } else if (!anchors(readFileSync(file, 'utf8')).has(anchor)) {
        problems.push(`${where}: link to ${target}: ${relative(ROOT, file)} has no heading #${anchor}`);
      }
    }
  }
}

function checkWording(page) {
  for (const { line, number } of proseLines(read(page))) {
    if (!MAY_NAME_TESTS.has(page) && /(^|[\s`(/])test\/[\w.-]/.test(line)) {
      problems.push(`${page}:${number}: names a test/ path (only docs/verification.md may)`);
    }
    if (/(^|\s)#\d+\b|\b(issue|pull request|PR)\s+#?\d+/i.test(line.replace(/`[^`]*`/g, ''))) {
      problems.push(`${page}:${number}: a tracker number, which readers cannot open`);
    }
  }
}

function checkReadmeShape() {
  const lines = read('README.md').split('\n');
  if (lines.length > README_MAX_LINES) problems.push(`README.md: ${lines.length} lines (at most ${README_MAX_LINES})`);
  const install = lines.findIndex((line) => /^npm install nest-scheduler-lock\b/.test(line));
  if (install < 0 || install >= 40) problems.push('README.md: no `npm install nest-scheduler-lock` line in lines 1-40');
  const example = lines.findIndex((line) => line.includes('@SchedulerLock('));
  const exampleEnd = lines.findIndex((line, index) => index > example && line.startsWith('```'));
  if (example < 0 || exampleEnd < 0 || exampleEnd >= 60) {
    problems.push('README.md: the @SchedulerLock example does not end within lines 1-60');
  }
}

const measured = PROSE.flatMap((page) => sentences(read(page)).map((sentence) => ({ page, ...sentence })));
/** docs/index.md lists every page: it is the docs' table of contents and the site's sidebar. */
function checkIndex() {
  const index = read('docs/index.md');
  for (const page of docsPages.filter((page) => page !== 'docs/index.md')) {
    if (!index.includes(`](${page.slice('docs/'.length)})`)) problems.push(`docs/index.md does not list ${page}`);
  }
}

const counts = measured.map(({ count }) => count).sort((a, b) => a - b);
const middle = Math.floor(counts.length / 2);
const median = counts.length % 2 === 1 ? counts[middle] : (counts[middle - 1] + counts[middle]) / 2;
const long = counts.filter((count) => count > 25).length;
console.log(
  `docs:check: median sentence ${median} words over ${counts.length} sentences of ${PROSE.length} pages (${long} over 25 words)`,
);
for (const { page, count, text } of measured.filter(({ count }) => count > 25))
  problems.push(`${page}: a sentence of ${count} words (at most 25): ${text}`);
if (median > MAX_MEDIAN_WORDS) problems.push(`median sentence ${median} words (at most ${MAX_MEDIAN_WORDS})`);
CHECKED.forEach(checkLinks);
CHECKED.filter((page) => page !== 'CONTRIBUTING.md').forEach(checkWording);
checkReadmeShape();
checkIndex();

if (problems.length > 0) {
  console.error(problems.map((problem) => `docs:check: ${problem}`).join('\n'));
  process.exit(1);
}
console.log(`docs:check: ${CHECKED.length} pages, links and anchors resolve`);
