import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The files outside dist/, lib/ and docs/ a user gets; npm adds package.json, README and LICENSE on its own. */
const TOP_LEVEL_FILES = ['package.json', 'README.md', 'LICENSE', 'CHANGELOG.md', 'SECURITY.md'];
/** The folders a user gets: the code, its sources (for source maps), and the docs pages README.md links to. */
const FOLDERS = ['dist/', 'lib/', 'docs/'];

/** The scripts npm runs when a package is installed. */
const INSTALL_SCRIPTS = ['preinstall', 'install', 'postinstall', 'prepare'];

/**
 * Unpacks `tarball` and checks that it ships what a user needs and nothing else: only {@link FOLDERS} and
 * {@link TOP_LEVEL_FILES}; every target of `exports`, `main`, `types` and `bin`; README.md and the docs pages with
 * every file their relative links name (so the links work in node_modules); CommonJS code under dist/cjs
 * that reads no file beside it through `import.meta` (the Lua scripts and the page are embedded at build time);
 * and source and declaration maps whose sources are
 * shipped files (so stack traces under `--enable-source-maps` and "go to definition" land on real files);
 * public types without `@internal` members; and no script that npm runs on install.
 * Throws with every problem found; returns a one-line summary.
 */
export async function checkTarball(tarball: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'nsl-tarball-'));
  try {
    await run('tar', ['-xzf', tarball, '-C', dir]);
    const root = join(dir, 'package');
    const files = await listFiles(root);
    const problems: string[] = [];

    for (const file of files) {
      if (!TOP_LEVEL_FILES.includes(file) && !FOLDERS.some((folder) => file.startsWith(folder))) {
        problems.push(`ships ${file}, outside ${FOLDERS.join(', ')} and ${TOP_LEVEL_FILES.join(', ')}`);
      }
    }
    if (!files.includes('docs/getting-started.md')) problems.push('does not ship the docs pages');
    for (const page of files.filter((file) => file.endsWith('.md'))) problems.push(...(await brokenLinks(root, page)));
    const manifest = JSON.parse(await readFile(join(root, 'package.json'), 'utf8')) as Record<string, unknown>;
    for (const file of [...TOP_LEVEL_FILES, ...entryPoints(manifest)]) {
      if (!files.includes(file)) problems.push(`does not ship ${file}`);
    }
    // npm runs these in the app that installs the package (prepare too, for a git install): none may exist.
    const scripts = Object.keys((manifest.scripts ?? {}) as Record<string, string>);
    for (const script of scripts.filter((name) => INSTALL_SCRIPTS.includes(name))) {
      problems.push(`package.json has an install script, "${script}"`);
    }
    // require() takes these files: `import.meta` there is a SyntaxError in CommonJS.
    for (const file of files.filter((name) => name.startsWith('dist/cjs/') && name.endsWith('.js'))) {
      if ((await readFile(join(root, file), 'utf8')).includes('import.meta')) problems.push(`${file} uses import.meta`);
    }

    const maps = files.filter((file) => file.endsWith('.map'));
    for (const map of maps) problems.push(...(await unresolvedSources(root, map)));
    if (!maps.some((map) => map.endsWith('.d.ts.map'))) problems.push('ships no declaration maps');

    // stripInternal: members tagged @internal must not reach the public types.
    for (const file of files.filter((name) => name.endsWith('.d.ts'))) {
      if ((await readFile(join(root, file), 'utf8')).includes('@internal'))
        problems.push(`${file} declares @internal members`);
    }

    if (problems.length > 0) throw new Error(`${tarball}:\n  ${problems.join('\n  ')}`);
    const shipped = `${FOLDERS.join(', ')}, ${TOP_LEVEL_FILES.join(', ')}`;
    return `${files.length} files (${shipped}); ${maps.length} source and declaration maps, every source shipped`;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** The package-relative files that `exports`, `main`, `types` and `bin` name. */
function entryPoints(manifest: Record<string, unknown>): string[] {
  const targets: string[] = [];
  const collect = (value: unknown): void => {
    if (typeof value === 'string') targets.push(value.replace(/^\.\//, ''));
    else if (value && typeof value === 'object') Object.values(value).forEach(collect);
  };
  collect([manifest.exports, manifest.main, manifest.types, manifest.bin]);
  return [...new Set(targets)];
}

/** The sources of the map `map` that are not files of the package at `root`. */
async function unresolvedSources(root: string, map: string): Promise<string[]> {
  const { sources = [], sourceRoot = '' } = JSON.parse(await readFile(join(root, map), 'utf8')) as {
    sources?: string[];
    sourceRoot?: string;
  };
  return sources.flatMap((source) => {
    const file = resolve(root, dirname(map), sourceRoot, source);
    const inside = file.startsWith(root + sep);
    if (inside && existsSync(file)) return [];
    return [`${map} names ${source}, ${inside ? 'which is not shipped' : 'outside the package'}`];
  });
}

/** The relative links of the Markdown page `page` (outside code) that name no file of the package at `root`. */
async function brokenLinks(root: string, page: string): Promise<string[]> {
  const text = (await readFile(join(root, page), 'utf8')).replace(/^```[\s\S]*?^```$/gm, '').replace(/`[^`\n]*`/g, '');
  const targets = [...text.matchAll(/\]\(([^)\s#]+)(?:#[^)\s]*)?\)/g)].map(([, target]) => target);
  return [...new Set(targets)]
    .filter((target) => !/^[a-z][a-z+.-]*:/i.test(target))
    .filter((target) => !existsSync(resolve(root, dirname(page), target)))
    .map((target) => `${page} links to ${target}, which is not shipped`);
}

/** Every file under `root`, as a `/`-separated path relative to it. */
async function listFiles(root: string): Promise<string[]> {
  const entries = await readdir(root, { recursive: true, withFileTypes: true });
  return entries
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split(sep).join('/'))
    .sort();
}
