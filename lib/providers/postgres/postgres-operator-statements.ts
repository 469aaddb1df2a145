import { HEALTH_REPORT_TTL, TRIGGER_RESULT_TTL } from '../../operators/operator-provider.js';
import type { PostgresTables } from './postgres-schema.js';
import { appendHistory, HELD, ms, NOW, statement } from './postgres-statements.js';

/**
 * A lock row for a job that was never locked yet, so that a pause or an operator entry has a row to go in:
 * free (expired since 1970), fencing token 0. `$1` name.
 */
const EMPTY_LOCK = `$1, '', '', 'epoch'::timestamptz, 'epoch'::timestamptz, 0, 1`;
const LOCK_COLUMNS = '(name, owner, locked_by, locked_at, lock_until, fencing_token, history_seq)';

/** Whether the health turn's row `t` is bidder `$1`'s still: its bid keeps the turn rather than takes it. */
const KEPT = `t.locked_by = $1 AND t.lease_until > ${NOW}`;

/** The operator store's statements for one set of tables. Operator actions go into the history. */
export function operatorStatements(tables: PostgresTables) {
  const { locks, history, jobs, nodes, skips, triggers, triggerResults, healthReports, healthTurn } = tables;
  /** The operator entry `$2` into `$1`'s history, behind the step `step` that bumped its lock row's `history_seq`. */
  const steered = (step: string) =>
    appendHistory(history, `(SELECT name, seq, $2::jsonb AS entry FROM ${step}) AS steered`, '$3::integer');
  return {
    /**
     * `$1` node, `$2` lastSeen, `$3` the node (JSON), `$4` catalogue entries (JSON array), `$5` the health turn's
     * lease (ms), `$6` the node's unhealthy jobs (JSON), arrays `$7` lock name, `$8` reason, `$9` count: its skips.
     * A row while the node holds the turn: the unhealthy jobs it keeps. A node that takes the turn keeps the
     * former holder's, and writes its own from its next bid on.
     */
    publish: statement(`
      WITH node AS (
        INSERT INTO ${nodes} (locked_by, last_seen, node) VALUES ($1, $2, $3)
        ON CONFLICT (locked_by) DO UPDATE SET last_seen = excluded.last_seen, node = excluded.node
      ), catalogue AS (
        INSERT INTO ${jobs} (job_name, job) SELECT job->>'jobName', job FROM jsonb_array_elements($4::jsonb) job
        ON CONFLICT (job_name) DO UPDATE SET job = excluded.job
      ), skipped AS (
        INSERT INTO ${skips} AS s (name, reason, count)
        SELECT * FROM unnest($7::text[], $8::text[], $9::bigint[]) ORDER BY 1, 2
        ON CONFLICT (name, reason) DO UPDATE SET count = s.count + excluded.count
      )
      INSERT INTO ${healthTurn} AS t (turn, locked_by, held_since, lease_until, unhealthy)
      VALUES (true, $1, now(), ${NOW} + ${ms('$5')}, '{}'::jsonb)
      ON CONFLICT (turn) DO UPDATE SET locked_by = excluded.locked_by, lease_until = excluded.lease_until,
        held_since = CASE WHEN ${KEPT} THEN t.held_since ELSE now() END,
        unhealthy = CASE WHEN ${KEPT} THEN $6::jsonb ELSE t.unhealthy END
      WHERE t.locked_by = $1 OR t.lease_until <= ${NOW}
      RETURNING t.held_since = now() AS taken, t.unhealthy`),
    /** Arrays: lock name, kind, time (epoch ms). Returns those claimed here; the jobs' old claims go. */
    claimHealthReports: statement(`
      WITH expired AS (
        DELETE FROM ${healthReports}
        WHERE name = ANY($1::text[]) AND reported_at < ${NOW} - ${ms(String(HEALTH_REPORT_TTL))}
      )
      INSERT INTO ${healthReports} (name, kind, at, reported_at)
      SELECT n, k, t, ${NOW} FROM unnest($1::text[], $2::text[], $3::bigint[]) AS c(n, k, t) ORDER BY n, k, t
      ON CONFLICT (name, kind, at) DO NOTHING RETURNING name, kind, at`),
    /** Each waiting trigger of the job names `$1` is taken by the one statement that deletes it. */
    takeTriggers: statement(`DELETE FROM ${triggers} WHERE job_name = ANY($1::text[]) RETURNING request`),
    /** `$1` id, `$2` result (JSON); results older than the TTL go. */
    reportTrigger: statement(`
      WITH expired AS (
        DELETE FROM ${triggerResults} WHERE reported_at < ${NOW} - ${ms(String(TRIGGER_RESULT_TTL))}
      )
      INSERT INTO ${triggerResults} (id, result, reported_at) VALUES ($1, $2, ${NOW})
      ON CONFLICT (id) DO UPDATE SET result = excluded.result, reported_at = excluded.reported_at`),
    forgetNodes: statement(`DELETE FROM ${nodes} WHERE last_seen < $1 RETURNING locked_by`),
    nodes: statement(`SELECT node FROM ${nodes} ORDER BY locked_by`),
    jobs: statement(`SELECT job FROM ${jobs} ORDER BY job_name`),
    job: statement(`SELECT job FROM ${jobs} WHERE job_name = $1`),
    history: statement(`SELECT entry FROM ${history} WHERE name = $1 ORDER BY seq DESC LIMIT $2`),
    /** The holder's owner value and milliseconds left while held, the fencing token, the pause. */
    lockState: statement(`
      SELECT CASE WHEN ${HELD} THEN l.owner END AS owner, l.fencing_token, l.paused,
        CASE WHEN ${HELD} THEN ceil(extract(epoch FROM l.lock_until - ${NOW}) * 1000)::bigint END AS ttl
      FROM ${locks} l WHERE name = $1`),
    /**
     * One row: every node, the catalogue entries of the jobs they run, and per job its lock as `lockState` reads
     * it (`name` its lock name) and its newest `$1` history entries (`recent`); each a JSON array.
     */
    clusterReading: statement(`
      WITH watched AS (
        SELECT j.job_name, j.job FROM ${jobs} j
        WHERE EXISTS (SELECT 1 FROM ${nodes} n WHERE n.node->'jobs' @> to_jsonb(j.job_name))
      )
      SELECT (SELECT coalesce(jsonb_agg(node ORDER BY locked_by), '[]'::jsonb) FROM ${nodes}) AS nodes,
        (SELECT coalesce(jsonb_agg(job ORDER BY job_name), '[]'::jsonb) FROM watched) AS jobs,
        (SELECT coalesce(jsonb_agg(jsonb_build_object(
          'name', w.job->>'lockName', 'owner', CASE WHEN ${HELD} THEN l.owner END,
          'fencing_token', l.fencing_token, 'paused', l.paused,
          'ttl', CASE WHEN ${HELD} THEN ceil(extract(epoch FROM l.lock_until - ${NOW}) * 1000)::bigint END,
          'recent', (SELECT coalesce(jsonb_agg(h.entry ORDER BY h.seq DESC), '[]'::jsonb) FROM (
            SELECT entry, seq FROM ${history} WHERE name = w.job->>'lockName' ORDER BY seq DESC LIMIT $1
          ) h))), '[]'::jsonb)
        FROM watched w LEFT JOIN ${locks} l ON l.name = w.job->>'lockName') AS readings`),
    skips: statement(`SELECT name, reason, count FROM ${skips}`),
    /** `$1` lock name, `$2` the pause entry (JSON, also the pause itself), `$3` history limit: a row if paused now. */
    pause: statement(`
      WITH paused AS (
        INSERT INTO ${locks} AS l (name, owner, locked_by, locked_at, lock_until, fencing_token, history_seq, paused)
        VALUES ($1, '', '', 'epoch', 'epoch', 0, 1, $2::jsonb - 'type')
        ON CONFLICT (name) DO UPDATE SET paused = excluded.paused, history_seq = l.history_seq + 1
        WHERE l.paused IS NULL
        RETURNING l.name, l.history_seq AS seq
      ), recorded AS (${steered('paused')})
      SELECT name FROM paused`),
    /** `$1` lock name, `$2` the resume entry, `$3` history limit: a row if it was paused. */
    resume: statement(`
      WITH resumed AS (
        UPDATE ${locks} l SET paused = NULL, history_seq = l.history_seq + 1
        WHERE name = $1 AND paused IS NOT NULL RETURNING l.name, l.history_seq AS seq
      ), recorded AS (${steered('resumed')})
      SELECT name FROM resumed`),
    /**
     * `$1` lock name, `$2` the trigger entry, `$3` history limit, `$4` job name, `$5` the request (JSON): queued
     * and recorded unless a trigger of the job is pending. One row: the request `queued`, or the one `pending`.
     */
    requestTrigger: statement(`
      WITH queued AS (
        INSERT INTO ${triggers} (job_name, request) VALUES ($4, $5::jsonb)
        ON CONFLICT (job_name) DO NOTHING RETURNING request
      ), entry AS (
        INSERT INTO ${locks} AS l ${LOCK_COLUMNS}
        SELECT ${EMPTY_LOCK} WHERE EXISTS (SELECT 1 FROM queued)
        ON CONFLICT (name) DO UPDATE SET history_seq = l.history_seq + 1 RETURNING l.name, l.history_seq AS seq
      ), recorded AS (${steered('entry')})
      SELECT (SELECT request FROM queued) AS queued,
        (SELECT request FROM ${triggers} WHERE job_name = $4) AS pending`),
    /** `$1` job name: its pending trigger, which a request that raced it could not see in its own statement. */
    pendingTrigger: statement(`SELECT request FROM ${triggers} WHERE job_name = $1`),
    /** `$1` job name, `$2` trigger id: a row if it was still waiting (no node took it), now withdrawn. */
    withdrawTrigger: statement(`DELETE FROM ${triggers} WHERE job_name = $1 AND request->>'id' = $2 RETURNING 1`),
    /**
     * Force-releases `$1`'s lock whoever holds it: its owner becomes `$4` (a force-release marker) until the old
     * lock would have expired, so that its holder's next renewal or release finds another owner. The
     * entry `$2`, naming the former holder (`formerNode` added here), goes into the history only then. One
     * row: the former holder, or null when the lock was free.
     */
    unlock: statement(`
      WITH current AS (
        SELECT l.name, l.locked_by AS former FROM ${locks} l WHERE name = $1 AND ${HELD} FOR UPDATE
      ), entry AS (
        UPDATE ${locks} l SET history_seq = l.history_seq + 1, owner = $4
        FROM current c WHERE l.name = c.name RETURNING l.name, l.history_seq AS seq
      ), recorded AS (
        ${appendHistory(
          history,
          `(SELECT e.name, e.seq, $2::jsonb || jsonb_build_object('formerNode', c.former) AS entry
            FROM entry e JOIN current c USING (name)) AS steered`,
          '$3::integer',
        )}
      )
      SELECT (SELECT former FROM current) AS former`),
    triggerResult: statement(`SELECT result FROM ${triggerResults} WHERE id = $1`),
  };
}
