import type { QueryResultRow } from 'pg';
import { CallBatch } from '../../core/provider/call-batch.js';
import type { PostgresSession } from './postgres-session.js';
import type { Statement } from './postgres-statements.js';

/** A request about one lock name, for a statement that takes arrays, one element per name. */
export interface NamedRequest {
  readonly name: string;
}

/**
 * A {@link CallBatch} of `statement`: a burst's requests go as one statement whose parameters are the
 * `parameters` of the requests (arrays, one element per request), and each request gets the row of its
 * name (`abandoned` hears of a round sent whose answer never came; see `PostgresSession.run`); its deadline
 * grows with the number of requests (`burstDeadline`). A statement
 * cannot touch a row twice, so a batch that names a lock twice (a lost run's release and its successor's)
 * goes in rounds of distinct names, one after the other.
 */
export function statementBatch<Request extends NamedRequest, Row extends QueryResultRow & NamedRequest>(
  session: PostgresSession,
  statement: Statement,
  parameters: (requests: readonly Request[]) => readonly unknown[],
  abandoned?: (requests: readonly Request[], backend: number) => void,
): CallBatch<Request, Row | undefined> {
  const sendRound = async (requests: readonly Request[]) => {
    const onAbandoned = abandoned && ((backend: number) => abandoned(requests, backend));
    const rows = await session.run<Row>(statement, parameters(requests), onAbandoned, requests.length);
    const byName = new Map(rows.map((row) => [row.name, row]));
    return requests.map((request) => byName.get(request.name));
  };
  return new CallBatch(async (requests) => {
    const replies: (Row | undefined)[] = [];
    for (const round of distinctRounds(requests)) {
      const rows = await sendRound(round.map((i) => requests[i]));
      round.forEach((i, j) => (replies[i] = rows[j]));
    }
    return replies;
  });
}

/** The indexes of `requests` in rounds whose names are distinct: usually one round of all. */
function distinctRounds(requests: readonly NamedRequest[]): number[][] {
  const rounds: { names: Set<string>; indexes: number[] }[] = [];
  requests.forEach(({ name }, i) => {
    let round = rounds.find((candidate) => !candidate.names.has(name));
    if (!round) rounds.push((round = { names: new Set(), indexes: [] }));
    round.names.add(name);
    round.indexes.push(i);
  });
  return rounds.map((round) => round.indexes);
}
