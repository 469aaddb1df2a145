import { readFileSync } from 'node:fs';
import ts from 'typescript';
import { docPages, REPO, withJsExtensions } from '../support/doc-pages.js';

/**
 * Every TypeScript block of README.md and of each docs/*.md page type-checks against the built package (dist/,
 * imported by name as an app does: `nest-scheduler-lock`, `nest-scheduler-lock/dashboard`…), with the root
 * tsconfig's strictness. A block that shows part of a class gets the declarations it assumes, listed below by
 * its first line: a preamble of imports and `declare`s, and the members its class needs. Nothing else is added,
 * but for one adaptation: the testing page's files are written for a CommonJS app, so compiled here as ES modules
 * their relative imports get `.js`. An error in a block is reported at its page and line. `npm test` builds dist/
 * first (scripts/test.mjs).
 */

/** What a block assumes, keyed by its first line. */
interface Assumed {
  /** Imports and declarations before the block. */
  readonly preamble: string;
  /** The block is class members (`members`) or statements of an async method (`method body`). */
  readonly shape?: 'members' | 'method body';
  /** Further members of that class, which the block calls. */
  readonly classMembers?: string;
}

const ASSUMED = new Map<string, Assumed>([
  [
    "import { Inject, Injectable } from '@nestjs/common';",
    // @nestjs/locks is not installed here: its registry, by the shape the page uses.
    { preamble: 'declare class LocksStorage { registerSource(source: object): void; }' },
  ],
  [
    "import { PostgresLockProvider } from 'nest-scheduler-lock/postgres';",
    { preamble: "import type { Pool } from 'pg';\ndeclare const pool: Pool;" },
  ],
  ["import { Module, Injectable } from '@nestjs/common';", { preamble: '' }],
  ["import { Redis as Valkey } from 'iovalkey';", { preamble: '' }],
  [
    'constructor(private readonly registry: SchedulerRegistry, private readonly lockedJobs: LockedJobRegistry) {}',
    {
      preamble: `import { SchedulerRegistry } from '@nestjs/schedule';
        import { CronJob } from 'cron';
        import { LockedJobRegistry } from 'nest-scheduler-lock';`,
      shape: 'members',
      classMembers: 'private sync(): void {}',
    },
  ],
  ["import { Injectable, Module } from '@nestjs/common';", { preamble: '' }],
  [
    "@Cron('0 */10 * * * *', { timeZone: 'Europe/Paris' })",
    {
      preamble: `import { Cron } from '@nestjs/schedule';
        import { currentLock, SchedulerLock } from 'nest-scheduler-lock';`,
      shape: 'members',
    },
  ],
  [
    "@Cron('0 */10 * * * *')",
    {
      preamble: `import { Cron } from '@nestjs/schedule';
        import { currentLock, SchedulerLock } from 'nest-scheduler-lock';`,
      shape: 'members',
      classMembers: 'private async exportFor(attempt: number): Promise<void> {}',
    },
  ],
  [
    "@SchedulerLock({ lockAtMostFor: '30m' })",
    {
      preamble: `import { Cron } from '@nestjs/schedule';
        import { SchedulerLock } from 'nest-scheduler-lock';
        declare const Sentry: { withMonitor<T>(slug: string, callback: () => T, options?: object): T };`,
      shape: 'members',
      classMembers: 'private async build(): Promise<void> {}',
    },
  ],
  [
    '@Injectable()',
    {
      preamble: `import { Injectable, type OnModuleInit } from '@nestjs/common';
        import { LockEvents } from 'nest-scheduler-lock';
        declare const PING_URL: string;`,
    },
  ],
  [
    "@Cron('0 */5 * * * *')",
    {
      preamble: `import { Cron } from '@nestjs/schedule';
        import { SchedulerLock } from 'nest-scheduler-lock';`,
      shape: 'members',
    },
  ],
  [
    "import { currentLock } from 'nest-scheduler-lock';",
    {
      preamble: 'declare const batches: string[];',
      shape: 'members',
      classMembers: 'private async index(batch: string, options: { signal: AbortSignal }): Promise<void> {}',
    },
  ],
  [
    'async settleInvoices() {',
    {
      preamble: `import { currentLock } from 'nest-scheduler-lock';
        declare const db: { query(sql: string, values: unknown[]): Promise<{ rowCount: number | null }> };
        declare const balance: number, ledgerId: string;`,
      shape: 'members',
    },
  ],
  ["import { Controller, Get, Param, Post, Req } from '@nestjs/common';", { preamble: '' }],
  ["import { Module } from '@nestjs/common';", { preamble: '' }],
  ["import { Inject, Module, type OnApplicationShutdown } from '@nestjs/common';", { preamble: '' }],
  [
    'SchedulerLockDashboardModule.forRoot({ dangerouslyAllowEveryone: true }) // a developer machine only',
    { preamble: "import { SchedulerLockDashboardModule } from 'nest-scheduler-lock/dashboard';" },
  ],
  [
    'const result = await this.executor.executeWithLock(() => this.bill(customer), {',
    {
      preamble: `import { Logger } from '@nestjs/common';
        import { LockingTaskExecutor } from 'nest-scheduler-lock';
        interface Customer { id: string }
        declare const customer: Customer;`,
      shape: 'method body',
      classMembers: `private readonly executor!: LockingTaskExecutor;
        private readonly logger = new Logger('Billing');
        private async bill(customer: Customer): Promise<void> {}`,
    },
  ],
  [
    'interface LockProvider {',
    {
      preamble: `import type { LockConfiguration } from 'nest-scheduler-lock/provider';
        import type {
          JobRecord,
          OccurrenceClaim,
          OperatorProvider,
          OutageLog,
          RecoveryClaim,
          ProviderOutageMonitor,
        } from 'nest-scheduler-lock/provider';`,
    },
  ],
  ["import { Controller, Get, Module } from '@nestjs/common';", { preamble: '' }],
  ["import { randomUUID } from 'node:crypto';", { preamble: '' }],
  ["import { InMemoryLockProvider } from 'nest-scheduler-lock';", { preamble: '' }],
  [
    "import { SchedulerLockTelemetry } from 'nest-scheduler-lock/opentelemetry';",
    { preamble: "import { SchedulerLockModule } from 'nest-scheduler-lock';" },
  ],
  ['SchedulerLockModule.forRoot({', { preamble: "import { SchedulerLockModule } from 'nest-scheduler-lock';" }],
  [
    "import { readFileSync } from 'node:fs';",
    { preamble: "import { SchedulerLockModule } from 'nest-scheduler-lock';" },
  ],
  // Job health: the admin service, the Terminus indicator and a node of the testing kit.
  [
    'const [health] = await admin.listHealth();',
    {
      preamble:
        "import type { SchedulerLockAdmin } from 'nest-scheduler-lock';\ndeclare const admin: SchedulerLockAdmin;",
      shape: 'method body',
    },
  ],
  [
    "this.locks.isHealthy('scheduler-lock', { timeout: '1s', unhealthyJobs: 'down' });",
    {
      preamble: "import type { SchedulerLockHealthIndicator } from 'nest-scheduler-lock/terminus';",
      shape: 'method body',
      classMembers: 'private readonly locks!: SchedulerLockHealthIndicator;',
    },
  ],
  [
    "jest.setSystemTime(new Date('2027-01-01T00:00:14.100Z'));",
    {
      preamble:
        '/// <reference types="jest" />\nimport type { TestNode } from \'nest-scheduler-lock/testing\';\ndeclare const node: TestNode;',
      shape: 'method body',
    },
  ],
  // Testing your jobs: the job and the nodes are files the specs import; the Jest spec and the Vitest one (whose
  // `vi` has the fake-timer calls of `jest` used there) run on the test runner's globals.
  ['// invoice.job.ts', { preamble: '' }],
  ['// invoice.nodes.ts', { preamble: '' }],
  [
    '// invoice.job.locking.spec.ts',
    {
      preamble:
        '/// <reference types="jest" />\ndeclare const vi: Pick<typeof jest, "useFakeTimers" | "useRealTimers" | "advanceTimersByTimeAsync" | "spyOn">;',
    },
  ],
]);

/** A ```ts block of a page: its code, the page, and the page's line of its first code line. */
interface Block {
  readonly code: string;
  readonly page: string;
  readonly line: number;
}

function typeScriptBlocks(page: string): Block[] {
  const markdown = readFileSync(`${REPO}${page}`, 'utf8');
  const blocks: Block[] = [];
  for (const match of markdown.matchAll(/^```ts\n([\s\S]*?)^```$/gm)) {
    const line = markdown.slice(0, match.index).split('\n').length + 1;
    blocks.push({ code: match[1], page, line });
  }
  return blocks;
}

/**
 * A block as a module: the preamble and the block's imports, then the block in the shape it needs. The
 * block keeps its line count (its imports leave blank lines), so a line of the file maps back to the README.
 */
function asModule(block: Block, assumed: Assumed): { source: string; blockStart: number } {
  const lines = block.code.split('\n');
  // An import's lines: from `import ` to the line that ends it with its module's name (Prettier wraps long ones).
  const importLines = new Set<number>();
  lines.forEach((line, index) => {
    if (!line.startsWith('import ')) return;
    let last = index;
    while (!/from '[^']+';$|^import '[^']+';$/.test(lines[last]) && last < lines.length - 1) last += 1;
    for (let at = index; at <= last; at += 1) importLines.add(at);
  });
  const isImport = (_line: string, index: number) => importLines.has(index);
  const opening = {
    undefined: '',
    members: 'export class Snippet {',
    'method body': `export class Snippet {\n${assumed.classMembers ?? ''}\nasync example() {`,
  }[String(assumed.shape)];
  const closing = {
    undefined: '',
    members: `\n${assumed.classMembers ?? ''}\n}`,
    'method body': '\n}\n}',
  }[String(assumed.shape)];
  const head = `${assumed.preamble}\n${lines.filter(isImport).join('\n')}\n${opening}\n`;
  const body = lines.map((line, index) => (isImport(line, index) ? '' : line)).join('\n');
  return { source: `${head}${body}${closing}\nexport {};\n`, blockStart: head.split('\n').length - 1 };
}

const COMPILER_OPTIONS: ts.CompilerOptions = {
  target: ts.ScriptTarget.ES2022,
  module: ts.ModuleKind.NodeNext,
  moduleResolution: ts.ModuleResolutionKind.NodeNext,
  lib: ['lib.es2023.d.ts'],
  types: ['node'],
  strict: true,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  skipLibCheck: true,
  noEmit: true,
};

/**
 * Type-checks the blocks as files at the package root (so they import the package by its name). A block whose
 * first line names its file (`// invoice.job.ts`) is that file, which other blocks import (`./invoice.job`, given
 * `.js` here); the first block of a name takes it.
 */
function compileErrors(blocks: Block[]): string[] {
  const files = new Map<string, { source: string; block: Block; blockStart: number }>();
  for (const block of blocks) {
    const firstLine = block.code.split('\n')[0];
    const assumed = ASSUMED.get(firstLine);
    if (!assumed) continue;
    const named = /^\/\/ ([\w.-]+\.ts)$/.exec(firstLine)?.[1];
    const anonymous = `doc-block-${block.page.replace(/\W/g, '-')}-${block.line}.ts`;
    const name = named && !files.has(`${REPO}${named}`) ? named : anonymous;
    const code = named ? withJsExtensions(block.code) : block.code;
    files.set(`${REPO}${name}`, { ...asModule({ ...block, code }, assumed), block });
  }
  const host = ts.createCompilerHost(COMPILER_OPTIONS);
  const { fileExists, readFile, getSourceFile } = host;
  host.fileExists = (name) => files.has(name) || fileExists(name);
  host.readFile = (name) => files.get(name)?.source ?? readFile(name);
  host.getSourceFile = (name, languageVersion, ...rest) => {
    const file = files.get(name);
    return file
      ? ts.createSourceFile(name, file.source, languageVersion)
      : getSourceFile(name, languageVersion, ...rest);
  };
  const program = ts.createProgram([...files.keys()], COMPILER_OPTIONS, host);
  return ts.getPreEmitDiagnostics(program).map((diagnostic) => {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, ' ');
    const file = diagnostic.file && files.get(diagnostic.file.fileName);
    if (!file || diagnostic.start === undefined) return message;
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    const { page, line: blockLine } = file.block;
    const where = line >= file.blockStart ? `${page}:${blockLine + line - file.blockStart}` : 'preamble';
    return `${where} (block of ${page}:${blockLine}): ${message}`;
  });
}

describe('README.md and docs/*.md', () => {
  const blocks = docPages().flatMap(typeScriptBlocks);

  it('lists what each TypeScript block assumes, and nothing for blocks that are gone', () => {
    const firstLines = blocks.map((block) => block.code.split('\n')[0]);
    const unlisted = blocks.filter((block) => !ASSUMED.has(block.code.split('\n')[0]));
    expect(unlisted.map(({ page, line }) => `${page}:${line}`)).toEqual([]);
    expect([...ASSUMED.keys()].filter((line) => !firstLines.includes(line))).toEqual([]);
  });

  it('has TypeScript blocks that compile against the built package, on every page that has them', () => {
    expect(new Set(blocks.map((block) => block.page))).toContain('README.md');
    expect(blocks.length).toBeGreaterThan(10);
    expect(compileErrors(blocks)).toEqual([]);
  }, 120_000);
});
