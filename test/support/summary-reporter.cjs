/**
 * Ends jest's output (on stderr, after jest's own summary) with the plain line `Summary: N passed, N failed` (and skipped, if any), which
 * CI readers that do not know jest's own summary understand.
 */
class SummaryReporter {
  onRunComplete(_contexts, results) {
    const skipped = results.numPendingTests + results.numTodoTests;
    const tail = skipped > 0 ? `, ${skipped} skipped` : '';
    process.stderr.write(`Summary: ${results.numPassedTests} passed, ${results.numFailedTests} failed${tail}\n`);
  }
}
module.exports = SummaryReporter;
