// Activities that wait for a second approval, as the sending tests set them up through the official
// clients: two users with an API key each, an ALLOW policy whose consensus needs both of them (the
// submitter's own vote counts as the first), and the vote that completes the activity.
import type { SigilInstance } from './sigil.js';
import { httpClient, newKey, sdkServerClient, type KeyPair } from './clients.js';

export interface Approver {
  userId: string;
  key: KeyPair;
}

/**
 * Two users of the root organization (`names`), each with a fresh P-256 API key, and a policy allowing
 * what `condition` names once both approved it. Answers the two users and the policy's id.
 */
export async function twoApprovers(sigil: SigilInstance, names: [string, string], condition: string): Promise<{ approvers: [Approver, Approver]; policyId: string }> {
  const api = sdkServerClient(sigil);
  const keys = [newKey(), newKey()];
  const { userIds } = await api.createUsers({
    users: names.map((userName, i) => ({
      userName,
      apiKeys: [{ apiKeyName: userName, publicKey: keys[i].apiPublicKey, curveType: 'API_KEY_CURVE_P256' as const }],
      authenticators: [],
      oauthProviders: [],
      userTags: [],
    })),
  });
  const { policyId } = await api.createPolicy({
    policyName: `${names[0]} and ${names[1]} approve`,
    effect: 'EFFECT_ALLOW',
    condition,
    consensus: `approvers.filter(u, u.id == '${userIds[0]}' || u.id == '${userIds[1]}').count() >= 2`,
    notes: '',
  });
  return { approvers: [{ userId: userIds[0], key: keys[0] }, { userId: userIds[1], key: keys[1] }], policyId };
}

/** `key`'s user approves the waiting activity with `fingerprint`, through @turnkey/http. */
export function approve(sigil: SigilInstance, key: KeyPair, fingerprint: string) {
  return httpClient(sigil, key).approveActivity({
    type: 'ACTIVITY_TYPE_APPROVE_ACTIVITY',
    timestampMs: String(Date.now()),
    organizationId: sigil.root.organizationId,
    parameters: { fingerprint },
  });
}
