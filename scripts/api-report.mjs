/**
 * The public API of each entry point of package.json `exports`, as API Extractor reports it from the built
 * declarations (dist/cjs, `npm run build` first): one committed file per entry, api/<entry>.api.md (`main` for
 * the package's root). A change to what an app can import shows up there, in review.
 * Run: `npm run api:update` rewrites the reports; `npm run api:check` (`--check`) fails, naming each entry
 * whose API differs from its committed report, and prints the difference.
 */
import { Extractor, ExtractorConfig } from '@microsoft/api-extractor';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const check = process.argv.includes('--check');
const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
const tempFolder = mkdtempSync(join(tmpdir(), 'nsl-api-report-'));

/** Each entry of `exports` with its declarations: [report name, declarations file]. */
const entries = Object.entries(manifest.exports)
  .filter(([, conditions]) => typeof conditions === 'object' && conditions.require?.types)
  .map(([entry, conditions]) => [entry === '.' ? 'main' : entry.slice(2), conditions.require.types]);

/** Messages that add no information here: release tags (the package has one public level) and TSDoc dialect. */
const quiet = { logLevel: 'none' };

let changed = 0;
try {
  for (const [name, types] of entries) {
    const config = ExtractorConfig.prepare({
      configObjectFullPath: join(ROOT, 'api', 'api-extractor.json'),
      packageJsonFullPath: join(ROOT, 'package.json'),
      configObject: {
        projectFolder: ROOT,
        mainEntryPointFilePath: join(ROOT, types),
        compiler: { tsconfigFilePath: join(ROOT, 'tsconfig.build.json') },
        apiReport: {
          enabled: true,
          reportFolder: join(ROOT, 'api'),
          reportTempFolder: tempFolder,
          reportFileName: name,
        },
        docModel: { enabled: false },
        dtsRollup: { enabled: false },
        tsdocMetadata: { enabled: false },
        messages: {
          compilerMessageReporting: { default: { logLevel: 'warning' } },
          extractorMessageReporting: {
            default: { logLevel: 'warning', addToApiReportFile: true },
            'ae-missing-release-tag': quiet,
            'ae-internal-missing-underscore': quiet,
          },
          tsdocMessageReporting: { default: quiet },
        },
      },
    });
    const result = Extractor.invoke(config, {
      localBuild: !check,
      showVerboseMessages: false,
      messageCallback: (message) => {
        // Warnings go into the report itself (addToApiReportFile); printing them again is noise.
        if (message.category === 'Extractor') message.handled = true;
      },
    });
    if (result.apiReportChanged) {
      changed += 1;
      console.log(`${check ? 'CHANGED' : 'updated'} api/${name}.api.md`);
      if (check) spawnSync('diff', ['-u', config.reportFilePath, config.reportTempFilePath], { stdio: 'inherit' });
    }
    if (result.errorCount > 0) throw new Error(`api/${name}.api.md: ${result.errorCount} errors`);
  }
} finally {
  rmSync(tempFolder, { recursive: true, force: true });
}

if (check && changed > 0) {
  console.error(`\n${changed} API report(s) differ from the built API: run \`npm run api:update\` and commit api/.`);
  process.exitCode = 1;
} else {
  console.log(`API reports: ${entries.length} entries, ${changed} ${check ? 'differ' : 'updated'}`);
}
