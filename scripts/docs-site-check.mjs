/**
 * Opens the built docs site (`npm run docs:build` writes docs/.vitepress/dist) in headless Chromium and fails on
 * a console error, a page error, a request that fails or answers 400+, an image that does not load, or a link
 * of those pages to the site (the sidebar's included, and its API reference pages) that does not answer 200.
 * The site is served from this process on a free loopback port, with clean URLs as VitePress writes them.
 * Run: `npm run docs:build && node scripts/docs-site-check.mjs`. CHROMIUM_PATH overrides /usr/bin/chromium.
 */
import { createServer } from 'node:http';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, normalize } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const SITE = fileURLToPath(new URL('../docs/.vitepress/dist/', import.meta.url));
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** The home page, the pages with pictures or links into the API reference, and the reference's home. */
const PAGES = ['/', '/how-it-works', '/long-running-jobs', '/operators', '/options', '/api/index.html'];
const TYPES = {
  '.html': 'text/html',
  '.js': 'text/javascript',
  '.css': 'text/css',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json',
  '.woff2': 'font/woff2',
};

if (!existsSync(join(SITE, 'index.html'))) throw new Error(`No built site in ${SITE}: run npm run docs:build`);
if (!existsSync(CHROMIUM))
  throw new Error(`No browser at ${CHROMIUM}: apt-get install chromium (or set CHROMIUM_PATH)`);

/** The file a URL path names: itself, `<path>.html` (clean URLs) or `<path>/index.html`. */
function fileOf(urlPath) {
  const path = normalize(decodeURIComponent(urlPath)).replace(/^(\.\.[/\\])+/, '');
  const candidates = [path, `${path}.html`, join(path, 'index.html')].map((candidate) => join(SITE, candidate));
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

const server = createServer((request, response) => {
  const file = fileOf(new URL(request.url, 'http://localhost').pathname);
  if (!file) return response.writeHead(404).end('not found');
  response.writeHead(200, { 'content-type': TYPES[extname(file)] ?? 'application/octet-stream' });
  response.end(readFileSync(file));
});
await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
const origin = `http://127.0.0.1:${server.address().port}`;

const problems = [];
/** Each link of the site the pages have, with the first page that has it. */
const links = new Map();
const started = Date.now();
const browser = await chromium.launch({ executablePath: CHROMIUM });
try {
  const page = await browser.newPage();
  let current = '';
  page.on('console', (message) => {
    if (message.type() === 'error')
      problems.push(`${current}: console error: ${message.text()} (${message.location().url})`);
  });
  page.on('pageerror', (error) => problems.push(`${current}: page error: ${error.message}`));
  // A prefetch that the next page's navigation cancels fails as ERR_ABORTED; a missing file answers 404 (below).
  page.on('requestfailed', (request) => {
    const reason = request.failure()?.errorText;
    if (reason !== 'net::ERR_ABORTED') problems.push(`${current}: request failed: ${request.url()} (${reason})`);
  });
  page.on('response', (response) => {
    if (response.status() >= 400) problems.push(`${current}: ${response.status()} for ${response.url()}`);
  });
  for (const path of PAGES) {
    current = path;
    await page.goto(origin + path, { waitUntil: 'networkidle' });
    const broken = await page.$$eval('img', (images) =>
      images.filter((image) => !image.complete || image.naturalWidth === 0).map((image) => image.src),
    );
    broken.forEach((src) => problems.push(`${path}: image did not load: ${src}`));
    const hrefs = await page.$$eval('a[href]', (anchors) => anchors.map((anchor) => anchor.href));
    for (const href of hrefs.filter((href) => href.startsWith(origin))) {
      if (!links.has(href.split('#')[0])) links.set(href.split('#')[0], path);
    }
  }
  for (const [link, path] of links) {
    const status = (await page.request.get(link)).status();
    if (status !== 200) problems.push(`${path}: link to ${link.slice(origin.length)} answers ${status}`);
  }
} finally {
  await browser.close();
  server.close();
}

if (problems.length > 0) {
  console.error(problems.map((problem) => `docs-site-check: ${problem}`).join('\n'));
  process.exit(1);
}
console.log(
  `docs-site-check: ${PAGES.length} pages open without errors, ${links.size} links answer (${Date.now() - started} ms)`,
);
