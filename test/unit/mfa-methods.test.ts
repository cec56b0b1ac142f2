// Which presented credentials meet which steps of an MFA policy (src/domain/identity/mfa-policies.ts
// assignMethods): one credential per step, every step when some assignment does it, whatever order
// the stamps came in; a pinned `id` accepts only that credential.
import { describe, expect, it } from 'vitest';
import { assignMethods, presentedMethod, DEFAULT_SESSION_ID, type PresentedMethod } from '../../src/domain/identity/mfa-policies.js';

const PASSKEY = 'AUTHENTICATION_TYPE_PASSKEY';
const API_KEY = 'AUTHENTICATION_TYPE_API_KEY';
const passkey: PresentedMethod = { type: PASSKEY, id: 'auth-1', publicKey: 'pk-passkey' };
const apiKey: PresentedMethod = { type: API_KEY, id: 'key-1', publicKey: 'pk-key-1' };
const apiKey2: PresentedMethod = { type: API_KEY, id: 'key-2', publicKey: 'pk-key-2' };

describe('assignMethods', () => {
  it('finds the assignment a greedy pass misses', () => {
    // The passkey could meet the first step, but only it meets the second.
    const steps = [{ any: [{ type: PASSKEY }, { type: API_KEY }] }, { any: [{ type: PASSKEY }] }];
    expect(assignMethods(steps, [passkey, apiKey])).toEqual([apiKey, passkey]);
  });

  it('counts one credential once, however often it stamps', () => {
    const steps = [{ any: [{ type: API_KEY }] }, { any: [{ type: API_KEY }] }];
    expect(assignMethods(steps, [apiKey, apiKey])).toEqual([apiKey, undefined]);
    expect(assignMethods(steps, [apiKey, apiKey2])).toEqual([apiKey, apiKey2]);
  });

  it('a pinned id accepts only that credential', () => {
    const steps = [{ any: [{ type: API_KEY, id: 'key-2' }] }];
    expect(assignMethods(steps, [apiKey])).toEqual([undefined]);
    expect(assignMethods(steps, [apiKey, apiKey2])).toEqual([apiKey2]);
  });

  it('nothing presented meets nothing', () => {
    expect(assignMethods([{ any: [{ type: PASSKEY }] }], [])).toEqual([undefined]);
  });
});

describe('presentedMethod', () => {
  it('names the method of each kind of stamp', () => {
    const key = (credential_type: string) => ({ id: 'k', public_key: 'pk', credential_type }) as any;
    expect(presentedMethod({ kind: 'api_key', apiKey: key('CREDENTIAL_TYPE_API_KEY_P256'), scheme: '', signature: '' })).toEqual({ type: API_KEY, id: 'k', publicKey: 'pk' });
    expect(presentedMethod({ kind: 'api_key', apiKey: key('CREDENTIAL_TYPE_LOGIN'), scheme: '', signature: '' })).toEqual({ type: 'AUTHENTICATION_TYPE_SESSION', id: DEFAULT_SESSION_ID, publicKey: 'pk' });
    expect(presentedMethod({ kind: 'webauthn', authenticator: { id: 'a', credential_public_key: 'cpk' } as any, scheme: 'SIGNATURE_SCHEME_TK_API_WEBAUTHN', signature: '' })).toEqual({ type: PASSKEY, id: 'a', publicKey: 'cpk' });
    expect(presentedMethod({ kind: 'attested', publicKey: 'x', scheme: '', signature: '' })).toBeUndefined();
  });
});
