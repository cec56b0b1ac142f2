// The reads every request makes before anything is served from the read cache (docs/design.md "The hot path"): the cache
// generations of the organizations it touches and, for a submission, the activity its fingerprint
// already names (found by the submission's own timestampMs: migration 025).
//
// SQLite reads in-process, one prepared statement per request. On PostgreSQL the requests that
// arrive in one turn of the event loop share one prepared statement, one round trip: each request's
// organizations and fingerprint are gathered until the turn's I/O has been handled (setImmediate),
// then read together. A request's read is still sent after it arrived, so it sees every change
// committed before then, by any process (the read cache's rule, src/store/read-cache.ts).
//
// A request from an organization the process keeps nothing for (the cold path, docs/design.md "The
// cold path (one sub-organization per end user)") also asks for what authentication, policy and
// signing need (src/store/cold-reads.ts). On PostgreSQL that is part of the same statement, so a cold
// request takes no round trip of its own: the batch's one statement carries it.
import type { RawDb } from './raw.js';
import { statement } from './raw.js';
import type { ActivityRow } from './repositories/activities.js';
import { POSTGRES_COLD_LATERAL, postgresColdParameter, postgresColdResult, sqliteColdReads, type ColdReadRequest, type ColdReadResult } from './cold-reads.js';

export interface Submission {
  organizationId: string;
  fingerprint: string;
  timestampMs: number;
}

export interface HotReadResult {
  generations: Map<string, number>;
  /** The activity the submission's fingerprint names (undefined: none, or no submission). */
  activity: ActivityRow | undefined;
  /** What the cold read found (undefined: none asked for, or it failed). */
  cold?: ColdReadResult;
}

export interface HotReads {
  /**
   * The cache generations of `organizationIds`, for a submission the activity it names, and for a
   * cold request what it needs (its organization's and parent's generations among them).
   */
  read(organizationIds: string[], submission?: Submission, cold?: ColdReadRequest): Promise<HotReadResult>;
}

// SQLite: a request touches its organization and at most its parent, given as two parameters (the
// first twice when there is no parent), which it plans as two index lookups.
const SQLITE_GENERATIONS = statement('sigil_generations', 'SELECT organization_id, generation FROM cache_generations WHERE organization_id IN ($1, $2)');

const SQLITE_GENERATIONS_AND_ACTIVITY = statement(
  'sigil_generations_and_activity',
  // The activity's id only (a replay is rare; its row is then read by id).
  `SELECT organization_id, generation, NULL AS activity FROM cache_generations WHERE organization_id IN ($1, $5)
   UNION ALL
   SELECT organization_id, NULL, id FROM activities WHERE timestamp_ms = $4 AND fingerprint = $3 AND organization_id = $2`,
);

const SQLITE_BY_ID = statement('sigil_activity_by_id', 'SELECT * FROM activities WHERE organization_id = $1 AND id = $2');

// PostgreSQL: the generations of every organization of the batch, then each submission's activity
// by its time and fingerprint: one probe of the idempotency key (migration 025), the only index
// these two columns lead; the organization is compared when the rows come back (a body names one
// organization, so at most a login moved to a sub-organization shares the pair). OFFSET 0 keeps the
// planner from flattening the subquery into a join, which it would run as a hash join over the whole
// index: the subquery stays a probe per submission.
// $1 the organizations; $2 the submissions as JSON [{k: index in the batch, t, f}].
const POSTGRES_HOT = `SELECT organization_id, generation, NULL::int AS k, NULL::text AS activity, NULL::text AS cold FROM cache_generations WHERE organization_id = ANY($1::text[])
   UNION ALL
   SELECT a.organization_id, NULL, s.k, row_to_json(a)::text, NULL
     FROM json_to_recordset($2::json) AS s(k int, t bigint, f text)
     CROSS JOIN LATERAL (SELECT * FROM activities WHERE timestamp_ms = s.t AND fingerprint = s.f OFFSET 0) a`;
const POSTGRES_BATCH = statement('sigil_hot_reads', POSTGRES_HOT);
// A batch with cold requests: also, per cold request, the values it needs by name (`cold`, the value
// as JSON text in `activity`). $3 the cold requests as JSON [{ck: index in the batch, corg, ckey, caddr}].
// A statement of its own, so that a batch without cold requests does not open the cold read's tables.
const POSTGRES_BATCH_COLD = statement(
  'sigil_hot_cold_reads',
  `${POSTGRES_HOT}
   UNION ALL
   SELECT NULL, NULL, c.ck, x.v, x.k
     FROM json_to_recordset($3::json) AS c(ck int, corg text, ckey text, caddr text)
     CROSS JOIN LATERAL (${POSTGRES_COLD_LATERAL}) x`,
);

interface Row {
  organization_id: string;
  generation: number | string | null;
  k?: number | null;
  activity: string | null;
  /** PostgreSQL, a cold request's value: its name (the value is in `activity`). */
  cold?: string | null;
}

/** Generations by organization (a batch's map may name more organizations than a request asked for). */
function generationsOf(rows: Row[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.generation !== null) out.set(r.organization_id, Number(r.generation));
  return out;
}

function sqliteHotReads(raw: RawDb): HotReads {
  const coldReads = sqliteColdReads(raw);
  return {
    async read(organizationIds, submission, coldRequest) {
      if (organizationIds.length > 2) throw new Error('a request reads the generations of at most two organizations');
      // In process: the cold read is its own read transaction, before the generations (a value read at
      // another generation than the one observed is not kept: src/store/read-cache.ts).
      const cold = coldRequest ? await coldReads.read(coldRequest).catch(() => undefined) : undefined;
      const [first, second = first] = organizationIds;
      if (!submission) return { generations: generationsOf(await raw.query<Row>(SQLITE_GENERATIONS, [first, second])), activity: undefined, cold };
      const { organizationId, fingerprint, timestampMs } = submission;
      // One statement: in-process, a statement's fixed cost is most of what a lookup costs.
      const rows = await raw.query<Row>(SQLITE_GENERATIONS_AND_ACTIVITY, [first, organizationId, fingerprint, timestampMs, second]);
      const found = rows.find((r) => r.activity !== null);
      const [activity] = found ? await raw.query<ActivityRow>(SQLITE_BY_ID, [organizationId, found.activity]) : [];
      return { generations: generationsOf(rows), activity, cold };
    },
  };
}

interface Waiting {
  organizationIds: string[];
  submission?: Submission;
  cold?: ColdReadRequest;
  resolve: (r: HotReadResult) => void;
  reject: (err: unknown) => void;
}

/** PostgreSQL: the reads of one turn of the event loop in one statement. */
class PostgresHotReads implements HotReads {
  private waiting: Waiting[] = [];

  constructor(private readonly raw: RawDb) {}

  read(organizationIds: string[], submission?: Submission, cold?: ColdReadRequest): Promise<HotReadResult> {
    return new Promise((resolve, reject) => {
      if (this.waiting.length === 0) setImmediate(() => void this.flush());
      this.waiting.push({ organizationIds, submission, cold, resolve, reject });
    });
  }

  private async flush(): Promise<void> {
    const batch = this.waiting;
    this.waiting = [];
    const organizations = [...new Set(batch.flatMap((w) => w.organizationIds))];
    const submissions: { k: number; t: number; f: string }[] = [];
    const colds: ReturnType<typeof postgresColdParameter>[] = [];
    batch.forEach((w, k) => {
      if (w.submission) submissions.push({ k, t: w.submission.timestampMs, f: w.submission.fingerprint });
      if (w.cold) colds.push(postgresColdParameter(k, w.cold));
    });
    let rows: Row[];
    try {
      rows =
        colds.length === 0
          ? await this.raw.query<Row>(POSTGRES_BATCH, [organizations, JSON.stringify(submissions)])
          : await this.raw.query<Row>(POSTGRES_BATCH_COLD, [organizations, JSON.stringify(submissions), JSON.stringify(colds)]);
    } catch (err) {
      for (const w of batch) w.reject(err);
      return;
    }
    const generations = generationsOf(rows);
    const activities = new Map<number, ActivityRow>();
    const coldValues = new Map<number, Map<string, string>>();
    for (const r of rows) {
      if (r.k === null || r.k === undefined || r.activity === null) continue;
      if (r.cold) {
        let values = coldValues.get(r.k);
        if (!values) coldValues.set(r.k, (values = new Map()));
        values.set(r.cold, r.activity);
      } else if (r.organization_id === batch[r.k].submission?.organizationId) activities.set(r.k, JSON.parse(r.activity) as ActivityRow);
    }
    batch.forEach((w, k) => w.resolve({ generations, activity: activities.get(k), cold: w.cold && postgresColdResult(w.cold, coldValues.get(k) ?? new Map()) }));
  }
}

export function hotReads(raw: RawDb): HotReads {
  return raw.dialect === 'postgres' ? new PostgresHotReads(raw) : sqliteHotReads(raw);
}
