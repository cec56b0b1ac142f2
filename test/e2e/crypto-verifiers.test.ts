// Every exported verifier of @turnkey/crypto that a self-hosted signer can satisfy, against a real
// `sigil serve`: each checks what Sigil answered, with the deployment signer key that
// /.well-known/sigil.json publishes as `dangerouslyOverrideSignerPublicKey` (and each refuses it with
// the key pinned by default, which is Turnkey's enclave key). verifySessionJwtSignature (sessions),
// verifyOtpVerificationToken (verify_otp's token, item 2; also checked with jose), the bundle
// verifiers encryptOtpCodeToBundle, decryptExportBundle, encryptWalletToBundle and
// encryptPrivateKeyToBundle, verifyStampSignature and computeActivityFingerprint (an activity's
// votes and fingerprint), verifyAppProofSignature (app proofs), decryptCredentialBundle and
// encryptOauth2ClientSecret. The verifiers that need an AWS Nitro attestation (verify,
// verifyWithQosPolicy) cannot be satisfied by design; docs/compatibility.md says why,
// and the test shows their refusal.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compactVerify, decodeProtectedHeader, importJWK } from 'jose';
import {
  computeActivityFingerprint,
  decryptCredentialBundle,
  decryptExportBundle,
  encryptOauth2ClientSecret,
  encryptOtpCodeToBundle,
  encryptPrivateKeyToBundle,
  encryptWalletToBundle,
  generateP256KeyPair,
  getPublicKey,
  verify,
  verifyAppProofSignature,
  verifyOtpVerificationToken,
  verifySessionJwtSignature,
  verifyStampSignature,
} from '@turnkey/crypto';
import { ApiKeyStamper, SignatureFormat } from '@turnkey/api-key-stamper';
import { TurnkeyClient } from '@turnkey/http';
import { mnemonicToAccount, privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { generateMnemonic } from '@scure/bip39';
import { wordlist } from '@scure/bip39/wordlists/english.js';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { attestedStampLogin, newKey, sdkServerClient, type KeyPair } from '../helpers/clients.js';
import { codeIn, smtpEnv, startInbox, type Inbox } from '../helpers/mail.js';

const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' } as const;

let inbox: Inbox;
let sigil: SigilInstance;
let api: ReturnType<typeof sdkServerClient>;
let org: string;
/** The signer key as a client finds it: published at /.well-known/sigil.json. */
let signer: string;

beforeAll(async () => {
  inbox = await startInbox();
  sigil = await startSigil(smtpEnv(inbox));
  api = sdkServerClient(sigil);
  org = sigil.root.organizationId;
  signer = (await (await fetch(`${sigil.url}/.well-known/sigil.json`)).json()).signerPublicKey;
  expect(signer).toBe(sigil.root.signerPublicKey);
}, 60_000);

afterAll(async () => {
  await sigil?.stop();
  await inbox?.close();
});

const claimsOf = (jwt: string) => JSON.parse(atob(jwt.split('.')[1]));

/** A verification token bound to `client` for `email`, as verify_otp V2 answers it. */
async function verificationToken(email: string, client: KeyPair): Promise<string> {
  const before = inbox.count(email);
  const { otpId, otpEncryptionTargetBundle } = await api.initOtp({ otpType: 'OTP_TYPE_EMAIL', contact: email, appName: 'Verifiers' } as never);
  const code = codeIn(await inbox.next(email, before));
  // The target bundle is signed by the deployment signer, not by Turnkey's enclave.
  await expect(encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, client.apiPublicKey)).rejects.toThrow();
  const encryptedOtpBundle = await encryptOtpCodeToBundle(code, otpEncryptionTargetBundle, client.apiPublicKey, signer);
  return (await api.verifyOtp({ otpId, encryptedOtpBundle })).verificationToken;
}

describe('@turnkey/crypto verifiers against Sigil', () => {
  it('verifyOtpVerificationToken and jose accept the verification token, which then logs in', async () => {
    const email = 'vera@example.com';
    const { userIds } = await api.createUsers({ users: [{ userName: 'vera', userEmail: email, apiKeys: [], authenticators: [], oauthProviders: [], userTags: [] }] });
    const client = newKey();
    const token = await verificationToken(email, client);

    const claims = await verifyOtpVerificationToken(token, signer);
    expect(claims).toEqual({
      id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      exp: expect.stringMatching(/^\d{13}$/),
      organization_id: org,
      verification_type: 'OTP_TYPE_EMAIL',
      contact: email,
      public_key: client.apiPublicKey,
    });
    expect(Number(claims.exp)).toBeGreaterThan(Date.now());
    await expect(verifyOtpVerificationToken(token)).rejects.toThrow(/signature is invalid/);

    // Any JOSE library: a compact ES256 JWS by the signer's key (exp is Turnkey's ms string, so the
    // claims are read as they are rather than by RFC 7519's numeric rules).
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'ES256', typ: 'JWT' });
    const point = Buffer.from(signer, 'hex'); // uncompressed: 04 ‖ x ‖ y
    const jwk = { kty: 'EC', crv: 'P-256', x: Buffer.from(point.subarray(1, 33)).toString('base64url'), y: Buffer.from(point.subarray(33)).toString('base64url') };
    const { payload } = await compactVerify(token, await importJWK(jwk, 'ES256'), { algorithms: ['ES256'] });
    expect(JSON.parse(Buffer.from(payload).toString('utf8'))).toEqual(claims);

    // Sigil reads its own new tokens: otp_login with the client signature of the login usage...
    const sessionKey = newKey();
    const message = JSON.stringify({ login: { publicKey: sessionKey.apiPublicKey }, tokenId: claims.id, type: 'USAGE_TYPE_LOGIN' });
    const { session } = await api.otpLogin({
      verificationToken: token,
      publicKey: sessionKey.apiPublicKey,
      clientSignature: { publicKey: client.apiPublicKey, scheme: 'CLIENT_SIGNATURE_SCHEME_API_P256', message, signature: await new ApiKeyStamper(client).sign(message, SignatureFormat.Raw) },
    } as never);
    expect(claimsOf(session)).toMatchObject({ user_id: userIds[0], organization_id: org });
    // ...and the X-Stamp-Attested login @turnkey/core's loginWithOtp sends, with a token of its own.
    const client2 = newKey();
    const attested = await attestedStampLogin(sigil.url, client2, await verificationToken(email, client2), org);
    expect(attested.status, JSON.stringify(attested.body)).toBe(200);
    expect(claimsOf(attested.body.activity.result.stampLoginResult.session)).toMatchObject({ user_id: userIds[0], public_key: client2.apiPublicKey });
  });

  it('verifySessionJwtSignature accepts session JWTs with the signer key', async () => {
    const sessionKey = newKey();
    const { session } = await api.stampLogin({ publicKey: sessionKey.apiPublicKey });
    expect(await verifySessionJwtSignature(session, signer)).toBe(true);
    expect(await verifySessionJwtSignature(session)).toBe(false);
    expect(claimsOf(session)).toMatchObject({ organization_id: org, user_id: sigil.root.userId, public_key: sessionKey.apiPublicKey, session_type: 'SESSION_TYPE_READ_WRITE' });
    const tampered = session.replace(/\.[^.]+\./, `.${Buffer.from(JSON.stringify({ ...claimsOf(session), user_id: 'x' })).toString('base64url')}.`);
    expect(await verifySessionJwtSignature(tampered, signer)).toBe(false);
  });

  it('verifyStampSignature and computeActivityFingerprint agree with an activity and its vote', async () => {
    const created = await api.createWallet({ walletName: 'stamped', accounts: [ETH] });
    const { activity } = await api.getActivity({ activityId: created.activity.id });
    const [vote] = activity.votes;
    expect(vote.publicKey).toBe(sigil.root.apiPublicKey);
    expect(await verifyStampSignature(vote.publicKey, vote.signature, vote.message)).toBe(true);
    expect(computeActivityFingerprint(vote.message)).toBe(activity.fingerprint);
    expect(await verifyStampSignature(vote.publicKey, vote.signature, vote.message.replace('stamped', 'stamper'))).toBe(false);
  });

  it('verifyAppProofSignature accepts app proofs; verify() needs a Nitro attestation Sigil cannot have', async () => {
    const client = new TurnkeyClient({ baseUrl: sigil.url }, new ApiKeyStamper(sigil.root));
    const res = await client.createWallet({
      type: 'ACTIVITY_TYPE_CREATE_WALLET',
      timestampMs: String(Date.now()),
      organizationId: org,
      parameters: { walletName: 'proven', accounts: [ETH] },
      generateAppProofs: true,
    } as never);
    const proofs = res.activity.appProofs ?? [];
    expect(proofs.map((p) => JSON.parse(p.proofPayload).type)).toEqual(['APP_PROOF_TYPE_ADDRESS_DERIVATION', 'APP_PROOF_TYPE_POLICY_OUTCOME']);
    for (const proof of proofs) expect(() => verifyAppProofSignature(proof)).not.toThrow();
    expect(JSON.parse(proofs[0].proofPayload).addressDerivationProof.address).toBe((res.activity.result as any).createWalletResult.addresses[0]);
    const { bootProof } = await api.getBootProof({ ephemeralKey: proofs[0].publicKey });
    // The boot proof carries no AWS attestation document: the Nitro chain cannot verify.
    await expect(verify(proofs[0] as never, bootProof as never)).rejects.toThrow();
  });

  it('the bundle verifiers accept bundles signed by the deployment signer: export, import, credentials', async () => {
    // decryptExportBundle
    const { walletId, addresses } = await api.createWallet({ walletName: 'exported', accounts: [ETH] });
    const target = generateP256KeyPair();
    const { exportBundle } = await api.exportWallet({ walletId, targetPublicKey: target.publicKeyUncompressed });
    const mnemonic = await decryptExportBundle({ exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: true, dangerouslyOverrideSignerPublicKey: signer });
    expect(mnemonicToAccount(mnemonic).address).toBe(addresses[0]);
    await expect(decryptExportBundle({ exportBundle, embeddedKey: target.privateKey, organizationId: org, returnMnemonic: true })).rejects.toThrow();

    // encryptWalletToBundle
    const words = generateMnemonic(wordlist);
    const { importBundle } = await api.initImportWallet({ userId: sigil.root.userId });
    await expect(encryptWalletToBundle({ mnemonic: words, importBundle, userId: sigil.root.userId, organizationId: org })).rejects.toThrow();
    const encryptedBundle = await encryptWalletToBundle({ mnemonic: words, importBundle, userId: sigil.root.userId, organizationId: org, dangerouslyOverrideSignerPublicKey: signer });
    const imported = await api.importWallet({ userId: sigil.root.userId, walletName: 'imported', encryptedBundle, accounts: [ETH] });
    expect(imported.addresses).toEqual([mnemonicToAccount(words).address]);

    // encryptPrivateKeyToBundle
    const secret = generatePrivateKey();
    const keyBundle = await api.initImportPrivateKey({ userId: sigil.root.userId });
    const encryptedKey = await encryptPrivateKeyToBundle({
      privateKey: secret.slice(2),
      keyFormat: 'HEXADECIMAL',
      importBundle: keyBundle.importBundle,
      userId: sigil.root.userId,
      organizationId: org,
      dangerouslyOverrideSignerPublicKey: signer,
    });
    const key = await api.importPrivateKey({ userId: sigil.root.userId, privateKeyName: 'imported key', encryptedBundle: encryptedKey, curve: 'CURVE_SECP256K1', addressFormats: ['ADDRESS_FORMAT_ETHEREUM'] });
    expect(key.addresses[0].address).toBe(privateKeyToAccount(secret).address);

    // decryptCredentialBundle (sealed to the client's key, not signed)
    const sessionTarget = generateP256KeyPair();
    const rw = await api.createReadWriteSession({ targetPublicKey: sessionTarget.publicKeyUncompressed });
    const sessionPrivateKey = decryptCredentialBundle(rw.credentialBundle, sessionTarget.privateKey);
    const session = { apiPrivateKey: sessionPrivateKey, apiPublicKey: Buffer.from(getPublicKey(sessionPrivateKey, true)).toString('hex') };
    expect(await sdkServerClient(sigil, session).getWhoami({})).toMatchObject({ userId: sigil.root.userId, organizationId: org });
  });

  it('encryptOauth2ClientSecret to the signer key gives a secret Sigil opens', async () => {
    const encryptedClientSecret = await encryptOauth2ClientSecret('client-secret', signer);
    const created = await api.createOauth2Credential({ provider: 'OAUTH2_PROVIDER_X', clientId: 'x-client', encryptedClientSecret });
    const { oauth2Credential } = await api.getOauth2Credential({ oauth2CredentialId: created.oauth2CredentialId });
    expect(oauth2Credential).toMatchObject({ provider: 'OAUTH2_PROVIDER_X', clientId: 'x-client' });
    expect(JSON.stringify(oauth2Credential)).not.toContain('client-secret');
    // A secret sealed to Turnkey's enclave key (the default) does not open here.
    await expect(api.createOauth2Credential({ provider: 'OAUTH2_PROVIDER_X', clientId: 'x2', encryptedClientSecret: await encryptOauth2ClientSecret('client-secret') })).rejects.toThrow();
  });
});
