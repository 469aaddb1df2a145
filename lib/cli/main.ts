#!/usr/bin/env node
/**
 * The `nest-scheduler-lock` command: the cluster's locked jobs for operators, from any machine that reaches its
 * store (Redis, or PostgreSQL with --postgres), without the app (README, "CLI").
 */
import { runCli } from './cli.js';

// No top-level await: this file is compiled to CommonJS with the rest of the package.
void runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(`${text}\n`),
  err: (text) => process.stderr.write(`${text}\n`),
}).then((code) => {
  process.exitCode = code;
});
