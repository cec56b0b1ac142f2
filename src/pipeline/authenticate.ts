// The credentials a request carries, read from its headers before anything is looked up
// (docs/reference/api.md "Stamps (who is asking)"; docs/reference/sessions.md "Read-only sessions"): a stamp, whose
// signature over the raw body is checked here so forged requests cost no database work, or, without
// one, a read-only session, which authenticates queries and never submissions. Who the credential
// belongs to is the domain's answer (src/domain/identity/authentication.ts), asked once by the pipeline.
import { parseStamp, verifyApiKeyStamp, verifyAttestedStamp, type Stamp } from '../auth/stamp.js';
import { SigilError } from '../errors/errors.js';

type Headers = Record<string, string | string[] | undefined>;

const present = (v: string | string[] | undefined) => typeof v === 'string' && v !== '';

export function readStamp(headers: Headers, rawBody: Buffer): Stamp {
  const stamp = parseStamp(headers);
  // The signature is checked before any lookup, so forged requests cost no database work.
  if (stamp.kind === 'api_key') verifyApiKeyStamp(stamp, rawBody);
  if (stamp.kind === 'attested') verifyAttestedStamp(stamp, rawBody);
  return stamp;
}

/**
 * The X-Session token when the request carries no stamp (a stamp, when present, is what
 * authenticates). Submissions with only a session are refused.
 */
export function readOnlySessionToken(headers: Headers, kind: 'submit' | 'query'): string | undefined {
  if (present(headers['x-stamp']) || present(headers['x-stamp-webauthn']) || present(headers['x-stamp-attested'])) return undefined;
  const token = headers['x-session'];
  if (!present(token)) return undefined;
  if (kind === 'submit') {
    throw new SigilError(
      'REQUEST_NOT_AUTHORIZED',
      'a read-only session (X-Session) cannot submit activities: stamp the request with a credential (X-Stamp or X-Stamp-Webauthn)',
    );
  }
  return token as string;
}
