// Wallet stamps (docs/reference/api.md "Stamps"): an Ethereum wallet's EIP-191 personal_sign stamp and a
// Solana wallet's Ed25519 stamp, produced by the official @turnkey/wallet-stamper, authenticate
// API keys registered with curve SECP256K1 / ED25519. Non-minimal DER (which the SDK's
// toDerSignature emits for about 1 in 256 signatures) is accepted.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeyClient } from '@turnkey/http';
import { WalletStamper, WalletType } from '@turnkey/wallet-stamper';
import { privateKeyToAccount, generatePrivateKey } from 'viem/accounts';
import { hashMessage } from 'viem';
import { secp256k1 } from '@noble/curves/secp256k1.js';
import nacl from 'tweetnacl';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { rawPost, sdkServerClient } from '../helpers/clients.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

const hex = (b: Uint8Array) => Buffer.from(b).toString('hex');

describe('wallet stamps', () => {
  it('Ethereum (SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191) and Solana (SIGNATURE_SCHEME_TK_API_ED25519)', async () => {
    const ethKey = generatePrivateKey();
    const account = privateKeyToAccount(ethKey);
    const ethCompressed = hex(secp256k1.getPublicKey(Buffer.from(ethKey.slice(2), 'hex'), true));
    const sol = nacl.sign.keyPair();

    const { userIds } = await sdkServerClient(sigil).createUsers({
      users: [
        {
          userName: 'wallet user',
          apiKeys: [
            { apiKeyName: `wallet-auth:${ethCompressed}`, publicKey: ethCompressed, curveType: 'API_KEY_CURVE_SECP256K1' },
            { apiKeyName: `wallet-auth:${hex(sol.publicKey)}`, publicKey: hex(sol.publicKey), curveType: 'API_KEY_CURVE_ED25519' },
          ],
          authenticators: [],
          oauthProviders: [],
          userTags: [],
        },
      ],
    });
    const user = await sdkServerClient(sigil).getUser({ userId: userIds[0] });
    expect(user.user.apiKeys.map((k) => k.credential.type).sort()).toEqual(['CREDENTIAL_TYPE_API_KEY_ED25519', 'CREDENTIAL_TYPE_API_KEY_SECP256K1']);

    const ethStamper = new WalletStamper({
      type: WalletType.Ethereum,
      signMessage: (message: string) => account.signMessage({ message }),
      getPublicKey: async () => ethCompressed,
    });
    const solStamper = new WalletStamper({
      type: WalletType.Solana,
      signMessage: async (message: string) => hex(nacl.sign.detached(new TextEncoder().encode(message), sol.secretKey)),
      getPublicKey: async () => hex(sol.publicKey),
    });
    for (const stamper of [ethStamper, solStamper]) {
      const client = new TurnkeyClient({ baseUrl: sigil.url }, stamper);
      const me = await client.getWhoami({ organizationId: sigil.root.organizationId });
      expect(me.userId).toBe(userIds[0]);
    }

    // A hand-made non-minimal DER: r and s each carry a superfluous leading 0x00.
    const body = JSON.stringify({ organizationId: sigil.root.organizationId });
    const digest = Buffer.from(hashMessage(body).slice(2), 'hex');
    const sig = secp256k1.sign(digest, Buffer.from(ethKey.slice(2), 'hex'), { prehash: false });
    const rs = Buffer.from(sig);
    const int = (v: Buffer) => Buffer.concat([Buffer.from([0x02, v.length + 1, 0x00]), v]);
    const seq = Buffer.concat([int(rs.subarray(0, 32)), int(rs.subarray(32))]);
    const der = Buffer.concat([Buffer.from([0x30, seq.length]), seq]);
    const stamp = Buffer.from(
      JSON.stringify({ publicKey: ethCompressed, scheme: 'SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191', signature: der.toString('hex') }),
    ).toString('base64url');
    const res = await rawPost(`${sigil.url}/public/v1/query/whoami`, body, { headers: { 'X-Stamp': stamp } });
    expect(res.status).toBe(200);
    expect(res.body.userId).toBe(userIds[0]);

    // A P-256 scheme claimed for the secp256k1 key is refused.
    const wrongScheme = Buffer.from(
      JSON.stringify({ publicKey: ethCompressed, scheme: 'SIGNATURE_SCHEME_TK_API_P256', signature: der.toString('hex') }),
    ).toString('base64url');
    const res2 = await rawPost(`${sigil.url}/public/v1/query/whoami`, body, { headers: { 'X-Stamp': wrongScheme } });
    expect(res2.status).toBe(401);
    expect(res2.body.message).toMatch(/could not verify api key signature/);
  });
});
