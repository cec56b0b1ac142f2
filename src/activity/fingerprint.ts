// The activity fingerprint: "sha256:" + hex(sha256(raw request body)) (docs/reference/activities.md "The record",
// `computeActivityFingerprint`). Two submissions with the same bytes are the same activity.
// One-shot hash(): no Hash object per request (docs/design.md "The hot path").
import { hash } from 'node:crypto';

export function fingerprintOf(rawBody: Uint8Array): string {
  return `sha256:${hash('sha256', rawBody, 'hex')}`;
}
