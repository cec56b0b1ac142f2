// Canonical JSON: object keys sorted at every level, no whitespace, undefined members left out (the
// JSON.stringify rules otherwise). What is hashed or MACed must serialize the same way in every
// process and version: the audit log's entries (src/audit/chain.ts) and the data digests of app
// proofs (src/domain/keys/app-proofs.ts). Pure.

/** JSON with object keys sorted at every level and no whitespace; undefined members are left out. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') {
    if (typeof value === 'number' && !Number.isFinite(value)) throw new Error('canonical JSON has no representation for non-finite numbers');
    return JSON.stringify(value);
  }
  if (Array.isArray(value)) return `[${value.map((v) => (v === undefined ? 'null' : canonicalJson(v))).join(',')}]`;
  const obj = value as Record<string, unknown>;
  const keys = Object.keys(obj)
    .filter((k) => obj[k] !== undefined)
    .sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${canonicalJson(obj[k])}`).join(',')}}`;
}
