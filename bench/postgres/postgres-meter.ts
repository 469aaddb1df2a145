import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import type pg from 'pg';
import type { StoreMeter } from '../scale/store-meter.js';

const CLOCK_TICKS_PER_SECOND = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

/** Fields of `/proc/<pid>/stat` after the command (which may hold spaces and parentheses). */
function statFields(pid: number): string[] | undefined {
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return text.slice(text.lastIndexOf(')') + 2).split(' ');
  } catch {
    return undefined; // exited meanwhile
  }
}

/**
 * CPU time (µs) a PostgreSQL cluster has used so far: its postmaster's own, that of its children that have
 * exited (the postmaster waited for them: `cutime` + `cstime`), and that of every child still running
 * (backends, checkpointer, WAL writer, autovacuum). A backend that starts or ends between two readings is
 * counted exactly: alive, as itself; ended, in its parent's total.
 */
export function postgresCpuMicros(postmaster: number): number {
  const ticks = (fields: string[], from: number, count: number) =>
    fields.slice(from, from + count).reduce((sum, field) => sum + Number(field), 0);
  // After the command: state (0), ppid (1), … utime (11), stime (12), cutime (13), cstime (14).
  const own = statFields(postmaster);
  if (!own) throw new Error(`PostgreSQL postmaster ${postmaster} is not running`);
  let total = ticks(own, 11, 4);
  for (const child of childrenOf(postmaster)) {
    const fields = statFields(child);
    if (fields && Number(fields[1]) === postmaster) total += ticks(fields, 11, 2);
  }
  return (total * 1e6) / CLOCK_TICKS_PER_SECOND;
}

/**
 * The PIDs of `pid`'s children: the kernel's list when it keeps one (a few reads, where a scan of /proc takes tens
 * of ms on a busy machine, between every two slices of the lock-cycle bench), else every PID of /proc.
 */
function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').split(' ').filter(Boolean).map(Number);
  } catch {
    return readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .map(Number);
  }
}

/** The CPU of a private PostgreSQL cluster (nothing else uses it) over a window, from /proc. */
export function postgresCpuMeter(postmaster: number): StoreMeter {
  let start: number | undefined;
  return {
    async begin() {
      start = postgresCpuMicros(postmaster);
    },
    async end() {
      if (start === undefined) throw new Error('postgresCpuMeter: end() before begin()');
      return { cpuMicros: postgresCpuMicros(postmaster) - start };
    },
  };
}

/** Statements and their execution time so far, from `pg_stat_statements`, the meter's own reads left out. */
async function readStatements(admin: pg.Pool): Promise<{ calls: number; micros: number }> {
  const { rows } = await admin.query<{ calls: string; ms: number }>(
    "SELECT coalesce(sum(calls), 0) AS calls, coalesce(sum(total_exec_time), 0)::float8 AS ms FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'",
  );
  return { calls: Number(rows[0].calls), micros: rows[0].ms * 1_000 };
}

/**
 * {@link postgresCpuMeter}, with the statements the cluster executed and their time, from `pg_stat_statements`
 * (the cluster must preload it; `admin` creates the extension).
 */
export async function postgresStatementMeter(admin: pg.Pool, postmaster: number): Promise<StoreMeter> {
  await admin.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
  const cpu = postgresCpuMeter(postmaster);
  let start: { calls: number; micros: number } | undefined;
  return {
    async begin() {
      start = await readStatements(admin);
      await cpu.begin();
    },
    async end() {
      if (!start) throw new Error('postgresStatementMeter: end() before begin()');
      const usage = await cpu.end();
      const now = await readStatements(admin);
      return { ...usage, commandsExecuted: now.calls - start.calls, executionMicros: now.micros - start.micros };
    },
  };
}
