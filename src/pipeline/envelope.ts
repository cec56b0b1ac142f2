// The request envelope: JSON body, organizationId, activity type and timestampMs liveness
// (docs/reference/api.md "Activities"; docs/reference/api.md "Transport"). Checks here need no database.
import { SigilError, badRequestDetail, invalid } from '../errors/errors.js';
import { checkJsonInput, type JsonLimits } from './input-limits.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The body as a JSON object. With `limits` (every request a server answers) its size and shape are
 * checked first (src/pipeline/input-limits.ts); without, only to read an already refused body again.
 */
export function parseBody(raw: Buffer, limits?: JsonLimits): Record<string, unknown> {
  if (limits) checkJsonInput(raw, limits);
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw.toString('utf8'));
  } catch {
    throw invalid('bad request body: the body is not valid JSON');
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) {
    throw invalid('bad request body: the body must be a JSON object');
  }
  return parsed as Record<string, unknown>;
}

export function organizationIdOf(body: Record<string, unknown>): string {
  const id = body.organizationId;
  if (id === undefined || id === null || id === '') {
    throw invalid('bad request body: missing parameter: organizationId', [
      badRequestDetail([{ field: 'organizationId', description: 'missing required field' }]),
    ]);
  }
  if (typeof id !== 'string' || !UUID.test(id)) {
    throw new SigilError('INVALID_ORGANIZATION_ID', 'malformed organization ID provided');
  }
  return id.toLowerCase();
}

/** Envelope fields besides type, organizationId and timestampMs that have a type of their own. */
export function checkEnvelope(body: Record<string, unknown>): void {
  const proofs = body.generateAppProofs;
  if (proofs !== undefined && proofs !== null && typeof proofs !== 'boolean') {
    throw invalid('bad request body: generateAppProofs must be a boolean', [
      badRequestDetail([{ field: 'generateAppProofs', description: 'must be boolean' }]),
    ]);
  }
}

const TIMESTAMP = /^\d{1,16}$/;

/** The body's timestampMs as a number, when it is one (checkTimestamp says what is wrong otherwise). */
export function timestampOf(body: Record<string, unknown>): number | undefined {
  const raw = body.timestampMs;
  const text = typeof raw === 'number' ? String(raw) : raw;
  return typeof text === 'string' && TIMESTAMP.test(text) ? Number(text) : undefined;
}

/** Liveness of a submission: not older than maxAgeMs, not further ahead than maxFutureMs. */
export function checkTimestamp(body: Record<string, unknown>, now: number, maxAgeMs: number, maxFutureMs: number): number {
  const raw = body.timestampMs;
  if (raw === undefined || raw === null || raw === '') {
    throw invalid('bad request body: missing parameter: timestampMs', [
      badRequestDetail([{ field: 'timestampMs', description: 'missing required field' }]),
    ]);
  }
  const ms = timestampOf(body);
  if (ms === undefined) {
    throw invalid('bad request body: timestampMs must be a string of epoch milliseconds', [
      badRequestDetail([{ field: 'timestampMs', description: 'must be a string of digits (epoch milliseconds)' }]),
    ]);
  }
  const text = String(raw);
  if (ms < now - maxAgeMs) {
    throw new SigilError('INVALID_TIME', `request timestampMs ${text} is too old: requests older than ${maxAgeMs / 60000} minutes are refused`);
  }
  if (ms > now + maxFutureMs) {
    throw new SigilError('INVALID_TIME', `request timestampMs ${text} is in the future: more than ${maxFutureMs / 60000} minutes ahead of server time`);
  }
  return ms;
}
