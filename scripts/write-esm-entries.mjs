/**
 * After `tsc -p tsconfig.build.json` has written the CommonJS build to dist/cjs, writes what makes it one
 * package for both module systems:
 * - dist/cjs/package.json, `{"type": "commonjs"}`: the root package.json says `"type": "module"` (lib/ and the
 *   repository's tests are ES modules), and Node must read dist/cjs/*.js as CommonJS.
 * - for each entry of package.json `exports` with an `import` condition, that ES module: it re-exports the
 *   CommonJS entry of the `require` condition, by name, and its .d.ts re-exports that entry's types. `import`
 *   and `require()` thus reach the same CommonJS module instances: one LockEvents, one currentLock() store,
 *   one identity per class (no dual-package hazard). A new entry point needs only its `exports` block.
 *
 * The names are those the CommonJS entry exports when it is loaded here (so its optional peers, devDependencies
 * of this repository, must be installed), listed explicitly rather than left to Node's static guess of a
 * CommonJS module's exports.
 * Run: `node scripts/write-esm-entries.mjs` (part of `npm run build`).
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = new URL('../', import.meta.url);
const require = createRequire(root);
const manifest = JSON.parse(readFileSync(new URL('package.json', root), 'utf8'));

writeFileSync(new URL('dist/cjs/package.json', root), `${JSON.stringify({ type: 'commonjs' })}\n`);

for (const [entry, conditions] of Object.entries(manifest.exports)) {
  if (typeof conditions !== 'object' || !conditions.import) continue;
  const esm = conditions.import.default;
  const cjs = conditions.require.default;
  const cjsTypes = conditions.require.types;
  const names = Object.keys(require(fileURLToPath(new URL(cjs, root)))).filter((name) => name !== '__esModule');
  if (names.length === 0) throw new Error(`${cjs} (exports["${entry}"]) exports nothing`);

  const from = (target) => {
    const path = posix.relative(posix.dirname(esm), target);
    return path.startsWith('.') ? path : `./${path}`;
  };
  const esmFile = fileURLToPath(new URL(esm, root));
  mkdirSync(dirname(esmFile), { recursive: true });
  writeFileSync(
    esmFile,
    [
      `// The ES-module face of ${cjs}: the same module instance, re-exported (scripts/write-esm-entries.mjs).`,
      `import entry from '${from(cjs)}';`,
      `export const { ${names.join(', ')} } = entry;`,
      '',
    ].join('\n'),
  );
  const typesFile = fileURLToPath(new URL(conditions.import.types, root));
  writeFileSync(typesFile, `export * from '${from(cjsTypes).replace(/\.d\.ts$/, '.js')}';\n`);
}
