// The activity fingerprint: "sha256:" + hex(sha256(raw request body)) (turnkey-contract.md §3,
// `computeActivityFingerprint`). Two submissions with the same bytes are the same activity.
// One-shot hash(): no Hash object per request (issue 14).
import { hash } from 'node:crypto';

export function fingerprintOf(rawBody: Uint8Array): string {
  return `sha256:${hash('sha256', rawBody, 'hex')}`;
}
