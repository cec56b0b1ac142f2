// The reads every request makes before anything is served from the read cache (issue 14): the cache
// generations of the organizations it touches and, for a submission, the activity its fingerprint
// already names. On PostgreSQL the two are one prepared statement, one round trip.
import type { RawDb } from './raw.js';
import { statement } from './raw.js';
import type { ActivityRow } from './repositories/activities.js';

const GENERATIONS = statement(
  'sigil_generations',
  'SELECT organization_id, generation FROM cache_generations WHERE organization_id = ANY($1::text[])',
  'SELECT organization_id, generation FROM cache_generations WHERE organization_id IN (SELECT value FROM json_each($1))',
);

const BY_FINGERPRINT = statement('sigil_activity_by_fingerprint', 'SELECT * FROM activities WHERE organization_id = $1 AND fingerprint = $2');

const GENERATIONS_AND_ACTIVITY = statement(
  'sigil_generations_and_activity',
  `SELECT organization_id, generation, NULL::text AS activity FROM cache_generations WHERE organization_id = ANY($1::text[])
   UNION ALL
   SELECT organization_id, NULL, row_to_json(a)::text FROM activities a WHERE organization_id = $2 AND fingerprint = $3`,
);

const list = (raw: RawDb, ids: string[]) => (raw.dialect === 'postgres' ? ids : JSON.stringify(ids));

function generationsOf(rows: { organization_id: string; generation: number | string | null }[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of rows) if (r.generation !== null) out.set(r.organization_id, Number(r.generation));
  return out;
}

export async function readGenerations(raw: RawDb, organizationIds: string[]): Promise<Map<string, number>> {
  return generationsOf(await raw.query(GENERATIONS, [list(raw, organizationIds)]));
}

/** The generations, and the activity of `organizationId` with this fingerprint (undefined: none). */
export async function readGenerationsAndActivity(
  raw: RawDb,
  organizationIds: string[],
  organizationId: string,
  fingerprint: string,
): Promise<{ generations: Map<string, number>; activity: ActivityRow | undefined }> {
  if (raw.dialect === 'sqlite') {
    // In-process: two cached statements cost less than combining them.
    const [generations, [activity]] = await Promise.all([readGenerations(raw, organizationIds), raw.query<ActivityRow>(BY_FINGERPRINT, [organizationId, fingerprint])]);
    return { generations, activity };
  }
  const rows = await raw.query<{ organization_id: string; generation: number | null; activity: string | null }>(GENERATIONS_AND_ACTIVITY, [organizationIds, organizationId, fingerprint]);
  const found = rows.find((r) => r.activity !== null);
  return { generations: generationsOf(rows), activity: found ? (JSON.parse(found.activity!) as ActivityRow) : undefined };
}
