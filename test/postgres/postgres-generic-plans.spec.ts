import type pg from 'pg';
import { operatorStatements } from '../../lib/providers/postgres/postgres-operator-statements.js';
import { DEFAULT_TABLE_PREFIX } from '../../lib/providers/postgres/postgres-options.js';
import { postgresTables } from '../../lib/providers/postgres/postgres-schema.js';
import { postgresStatements, type Statement } from '../../lib/providers/postgres/postgres-statements.js';
import { postgresFixture, type PostgresFixture } from './postgres-fixture.js';

/**
 * After five runs of a named statement, PostgreSQL may switch to a generic plan, which guesses 10 rows for an
 * `unnest` of a parameter. A batch statement must stay linear in its batch under that plan: one planned as
 * quadratic took 130 ms for 1,000 claims instead of 9.
 */
const BATCH = 1_000;
/** Rows a plan may handle per name of the batch, summed over its nodes and their loops (19 measured). */
const ROWS_PER_NAME = 40;

interface PlanNode {
  readonly 'Actual Rows': number;
  readonly 'Actual Loops': number;
  readonly Plans?: readonly PlanNode[];
}

const rowsHandled = (node: PlanNode): number =>
  node['Actual Rows'] * node['Actual Loops'] + (node.Plans ?? []).reduce((sum, child) => sum + rowsHandled(child), 0);

/** `value` as a SQL expression: `EXPLAIN EXECUTE` takes no bind parameters. */
function literal(client: pg.PoolClient, value: unknown): string {
  if (Array.isArray(value)) return `ARRAY[${value.map((item) => literal(client, item)).join(', ')}]`;
  if (typeof value === 'string') return client.escapeLiteral(value);
  if (typeof value === 'object' && value !== null) return `${client.escapeLiteral(JSON.stringify(value))}::jsonb`;
  return String(value);
}

describe('PostgreSQL batch statements under a generic plan', () => {
  let fixture: PostgresFixture;
  let client: pg.PoolClient;
  let statements: ReturnType<typeof postgresStatements>;
  let operators: ReturnType<typeof operatorStatements>;
  const names = Array.from({ length: BATCH }, (_, i) => `tenant-${i}`);
  const each = (value: unknown) => names.map(() => value);
  const claims = (node: string, occurrence: number) => [
    names,
    each(`owner:${occurrence}:${node}`),
    each(node),
    each(10_000),
    each(occurrence),
  ];

  beforeAll(async () => {
    fixture = await postgresFixture('generic-plans');
    await fixture.connect().createTables();
    const tables = postgresTables({ schema: fixture.schema, tablePrefix: DEFAULT_TABLE_PREFIX });
    statements = postgresStatements(tables);
    operators = operatorStatements(tables);
    client = await fixture.admin.connect();
    await client.query(statements.claimOccurrences.text, claims('node-a', 1_000));
  });
  afterAll(async () => {
    client.release();
    await fixture.close();
  });

  /** The rows the generic plan of `statement` handled for `values`, its changes rolled back. */
  async function rowsUnderGenericPlan(statement: Statement, values: unknown[]): Promise<number> {
    let prepared = false;
    await client.query('BEGIN');
    try {
      await client.query('SET LOCAL plan_cache_mode = force_generic_plan');
      await client.query(`PREPARE generic_plan AS ${statement.text}`);
      prepared = true;
      const args = values.map((value) => literal(client, value)).join(', ');
      const { rows } = await client.query(`EXPLAIN (ANALYZE, FORMAT JSON) EXECUTE generic_plan(${args})`);
      return rowsHandled(rows[0]['QUERY PLAN'][0].Plan);
    } finally {
      await client.query('ROLLBACK');
      if (prepared) await client.query('DEALLOCATE generic_plan'); // a PREPARE outlives its transaction
    }
  }

  it.each([
    ['occurrence claims all refused', () => [statements.claimOccurrences, claims('node-b', 1_000)] as const],
    ['occurrence claims all taken', () => [statements.claimOccurrences, claims('node-b', 2_000)] as const],
    [
      'job locks all refused',
      () => [statements.lockJobs, [names, each('owner:b'), each('node-b'), each(10_000), each(false)]] as const,
    ],
    [
      'run ends',
      () =>
        [
          statements.release,
          [names, each('owner:1000:node-a'), each(0), each('succeeded'), each(true), each({ type: 'run' }), 20],
        ] as const,
    ],
    [
      'lease renewals',
      () => [statements.renew, [names, each('owner:1000:node-a'), each(10_000), each(false)]] as const,
    ],
    ['health report claims', () => [operators.claimHealthReports, [names, each('missed'), each(1_000)]] as const],
    [
      'a heartbeat with skips of every job',
      () =>
        [
          operators.publish,
          ['node-b', 1_000, { node: 'node-b' }, '[]', 10_000, {}, names, each('locked'), each(1)],
        ] as const,
    ],
  ])(`%s: at most ${ROWS_PER_NAME} rows handled per name of ${BATCH}`, async (_, input) => {
    const [statement, values] = input();
    const rows = await rowsUnderGenericPlan(statement, [...values]);
    expect(rows).toBeGreaterThanOrEqual(BATCH); // the statement did handle the batch
    expect(rows).toBeLessThanOrEqual(ROWS_PER_NAME * BATCH);
  });
});
