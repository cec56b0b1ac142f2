// The activity fingerprint: "sha256:" + hex(sha256(raw request body)) (turnkey-contract.md §3,
// `computeActivityFingerprint`). Two submissions with the same bytes are the same activity.
import { createHash } from 'node:crypto';

export function fingerprintOf(rawBody: Uint8Array): string {
  return `sha256:${createHash('sha256').update(rawBody).digest('hex')}`;
}
