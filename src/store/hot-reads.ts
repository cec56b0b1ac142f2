// The reads every request makes before anything is served from the read cache (issue 14): the cache
// generations of the organizations it touches and, for a submission, the activity its fingerprint
// already names. On PostgreSQL the two are one prepared statement, one round trip.
import type { RawDb } from './raw.js';
import { statement } from './raw.js';
import type { ActivityRow } from './repositories/activities.js';

// A request touches its organization and at most its parent: SQLite gets the two as parameters (the
// first twice when there is no parent), which it plans as two index lookups.
const GENERATIONS = statement(
  'sigil_generations',
  'SELECT organization_id, generation FROM cache_generations WHERE organization_id = ANY($1::text[])',
  'SELECT organization_id, generation FROM cache_generations WHERE organization_id IN ($1, $2)',
);


const GENERATIONS_AND_ACTIVITY = statement(
  'sigil_generations_and_activity',
  `SELECT organization_id, generation, NULL::text AS activity FROM cache_generations WHERE organization_id = ANY($1::text[])
   UNION ALL
   SELECT organization_id, NULL, row_to_json(a)::text FROM activities a WHERE organization_id = $2 AND timestamp_ms = $4 AND fingerprint = $3`,
  // SQLite: the activity's id only (a replay is rare; its row is then read by id).
  `SELECT organization_id, generation, NULL AS activity FROM cache_generations WHERE organization_id IN ($1, $5)
   UNION ALL
   SELECT organization_id, NULL, id FROM activities WHERE organization_id = $2 AND timestamp_ms = $4 AND fingerprint = $3`,
);

const BY_ID = statement('sigil_activity_by_id', 'SELECT * FROM activities WHERE organization_id = $1 AND id = $2');

function generationParams(raw: RawDb, ids: string[]): unknown[] {
  if (raw.dialect === 'postgres') return [ids];
  if (ids.length > 2) throw new Error('a request reads the generations of at most two organizations');
  return [ids[0], ids[1] ?? ids[0]];
}

function generationsOf(rows: { organization_id: string; generation: number | string | null }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.generation !== null) out.set(r.organization_id, Number(r.generation));
  return out;
}

export async function readGenerations(raw: RawDb, organizationIds: string[]): Promise<Map<string, number>> {
  return generationsOf(await raw.query(GENERATIONS, generationParams(raw, organizationIds)));
}

/**
 * The generations, and the activity of `organizationId` with this fingerprint (undefined: none),
 * found by the submission's own timestampMs (migration 025: the body carries it, so it is part of
 * the idempotency key).
 */
export async function readGenerationsAndActivity(
  raw: RawDb,
  organizationIds: string[],
  submission: { organizationId: string; fingerprint: string; timestampMs: number },
): Promise<{ generations: Map<string, number>; activity: ActivityRow | undefined }> {
  const { organizationId, fingerprint, timestampMs } = submission;
  if (raw.dialect === 'sqlite') {
    // One statement: in-process, a statement's fixed cost is most of what a lookup costs.
    const [first, second] = generationParams(raw, organizationIds);
    const rows = await raw.query<{ organization_id: string; generation: number | null; activity: string | null }>(GENERATIONS_AND_ACTIVITY, [first, organizationId, fingerprint, timestampMs, second]);
    const found = rows.find((r) => r.activity !== null);
    const [activity] = found ? await raw.query<ActivityRow>(BY_ID, [organizationId, found.activity]) : [];
    return { generations: generationsOf(rows), activity };
  }
  const rows = await raw.query<{ organization_id: string; generation: number | null; activity: string | null }>(GENERATIONS_AND_ACTIVITY, [organizationIds, organizationId, fingerprint, timestampMs]);
  const found = rows.find((r) => r.activity !== null);
  return { generations: generationsOf(rows), activity: found ? (JSON.parse(found.activity!) as ActivityRow) : undefined };
}
