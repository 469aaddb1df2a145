import { join } from 'node:path';
import { installNode, NODE_CACHE } from './node-versions.js';

/**
 * `node .build/test/package/install-node.js <major>…`: installs those Node majors where test:package keeps them
 * (node-versions.ts), unless they are there, and prints each one's `node`, a line each. `.ci/run` installs them
 * once for its unit tiers and test:package.
 */
async function main(majors: string[]): Promise<void> {
  if (majors.length === 0 || majors.some((major) => !/^\d+$/.test(major))) {
    throw new Error(`usage: node install-node.js <major>… (install-node.js 22 24); got ${majors.join(' ')}`);
  }
  const runtimes = await Promise.all(majors.map((major) => installNode(Number(major), NODE_CACHE)));
  for (const { binDir } of runtimes) console.log(join(binDir!, 'node'));
}

main(process.argv.slice(2)).catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
