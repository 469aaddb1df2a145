/**
 * Says, before a script's builds start, that they take minutes: two tsc runs print nothing until they end.
 * Run: `node scripts/build-notice.mjs <what runs after the builds>`, first in an npm script such as `demo`.
 */
const then = process.argv.slice(2).join(' ') || 'the script';
console.log(
  `Building first: the package (dist/), then the tests, demo and benchmarks (.build/). ` +
    `On an idle 2-core machine this takes about 35 s, under load several minutes, with no output until each tsc ends. Then ${then} starts.`,
);
