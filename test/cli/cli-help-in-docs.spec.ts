import { readFileSync } from 'node:fs';
import { REPO } from '../support/doc-pages.js';
import { runCliInProcess } from './support/run-cli.js';

/** The text block of docs/operators.md that starts with `$ nest-scheduler-lock --help`, without that line. */
function documentedHelp(): string {
  const page = readFileSync(`${REPO}docs/operators.md`, 'utf8');
  const block = /```text\n\$ nest-scheduler-lock --help\n([\s\S]*?)```/.exec(page);
  if (!block) throw new Error('docs/operators.md has no text block starting with "$ nest-scheduler-lock --help"');
  return block[1];
}

describe('the CLI help that docs/operators.md shows', () => {
  it('is what the CLI prints', async () => {
    const { code, stdout } = await runCliInProcess(['--help']);
    expect(code).toBe(0);
    expect(documentedHelp()).toBe(stdout);
  });
});
