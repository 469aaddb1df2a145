const { writeSync } = require('node:fs');
const { relative } = require('node:path');

/** How many of the slowest spec files a run lists, to show where a run's time goes. */
const SLOWEST_SHOWN = 15;

/**
 * Ends jest's output (on stderr) with the slowest spec files and their times, each tier's seconds, then the line
 * `Summary: N passed, N failed` (and skipped, if any), which CI readers that do not know jest's own summary
 * understand. Jest prints its own summary after every custom reporter, so both wait for the process's exit.
 */
class SummaryReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    this.watching = globalConfig.watch || globalConfig.watchAll;
  }

  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    const summary = `Summary: ${results.numPassedTests} passed, ${results.numFailedTests} failed${tail}\n`;
    const text = this.slowestFiles(results.testResults) + tierSeconds(results.testResults) + summary;
    // A watched run never exits; writeSync because an exit listener cannot wait for a stream.
    if (this.watching) process.stderr.write(text);
    else process.once('exit', () => writeSync(process.stderr.fd, text));
  }

  /** The slowest files, one a line: seconds, tier (the Jest project), path. */
  slowestFiles(fileResults) {
    const slowest = [...fileResults]
      .sort((a, b) => b.perfStats.runtime - a.perfStats.runtime)
      .slice(0, SLOWEST_SHOWN)
      .map(({ perfStats, displayName, testFilePath }) => {
        const seconds = (perfStats.runtime / 1000).toFixed(1).padStart(7);
        const tier = displayName ? `[${displayName.name}] ` : '';
        return `${seconds} s  ${tier}${relative(this.rootDir, testFilePath)}\n`;
      });
    return slowest.length ? `Slowest ${slowest.length} of ${fileResults.length} files:\n${slowest.join('')}` : '';
  }
}

/** The line `Seconds per tier, summed over files: unit N, …`: with two lanes, where a run's time goes. */
function tierSeconds(fileResults) {
  const sums = new Map();
  for (const { perfStats, displayName } of fileResults) {
    const tier = displayName?.name ?? 'all';
    sums.set(tier, (sums.get(tier) ?? 0) + perfStats.runtime / 1000);
  }
  const tiers = [...sums].map(([tier, seconds]) => `${tier} ${Math.round(seconds)}`);
  return tiers.length ? `Seconds per tier, summed over files: ${tiers.join(', ')}\n` : '';
}

module.exports = SummaryReporter;
