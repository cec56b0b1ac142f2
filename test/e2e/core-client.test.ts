// @turnkey/core's generated client (the one its TurnkeyClient is built on), unchanged, against a real
// `sigil serve`: it sends `generateAppProofs` on every activity, flattens `result[resultKey]`, and polls
// get_activity with the configured organization; activities complete in the submit response.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TurnkeySDKClientBase } from '@turnkey/core/dist/__generated__/sdk-client-base.mjs';
import { ApiKeyStamper } from '@turnkey/core';
import { recoverAddress } from 'viem';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

describe('@turnkey/core client', () => {
  it('whoami, create_wallet and sign_raw_payload', async () => {
    const client = new TurnkeySDKClientBase({
      apiBaseUrl: sigil.url,
      organizationId: sigil.root.organizationId,
      apiKeyStamper: new ApiKeyStamper({ apiPublicKey: sigil.root.apiPublicKey, apiPrivateKey: sigil.root.apiPrivateKey }),
      defaultStamperType: 'api-key' as never,
    });
    const me = await client.getWhoami({ organizationId: sigil.root.organizationId });
    expect(me.userId).toBe(sigil.root.userId);
    const wallet = await client.createWallet({
      walletName: 'from core',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
    });
    expect(wallet.addresses).toHaveLength(1);
    const digest = `0x${'ab'.repeat(32)}` as const;
    const sig = await client.signRawPayload({ signWith: wallet.addresses[0], payload: digest, encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' });
    expect(sig.activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
    const recovered = await recoverAddress({ hash: digest, signature: { r: `0x${sig.r}`, s: `0x${sig.s}`, yParity: Number(sig.v) } });
    expect(recovered).toBe(wallet.addresses[0]);
  });
});
