// get_active_policies through @turnkey/http's TurnkeyClient (@turnkey/http 6.6.0
// v1GetActivePoliciesRequest/Response, v1ActivePolicyStatus, which the bundled swagger lacks:
// scripts/swagger-supplement.json; docs/policies.md "Policies and approvals"): every policy of the
// organization with whether it is inside its time window at evaluatedAtMs (the request's time, the
// instant the policy engine judges by), its time expression, and the reason when that expression cannot
// be evaluated. The engine agrees: an inactive DENY does not deny, an active one does.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';
import { httpClient, newKey, rawPost, sdkServerClient } from '../helpers/clients.js';
import { execSql } from '../helpers/db-snapshot.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
});
afterAll(async () => {
  await sigil?.stop();
});

const PAST = "time.now < Timestamp('2000-01-01T00:00:00Z')";
const WINDOW = "time.now >= Timestamp('2000-01-01T00:00:00Z') && time.now < Timestamp('2999-01-01T00:00:00Z')";

describe('get_active_policies', () => {
  it('reports each policy of the organization as active or not at the time it evaluates', async () => {
    const api = sdkServerClient(sigil);
    const client = httpClient(sigil);
    const org = sigil.root.organizationId;
    const empty = await client.getActivePolicies({ organizationId: org });
    expect(empty.statuses).toEqual([]);

    const always = (await api.createPolicy({ policyName: 'no window', effect: 'EFFECT_ALLOW', condition: 'false', notes: '' })).policyId;
    const ended = (await api.createPolicy({ policyName: 'ended', effect: 'EFFECT_DENY', condition: "activity.resource == 'USER'", notes: '', time: PAST })).policyId;
    const current = (await api.createPolicy({ policyName: 'current', effect: 'EFFECT_ALLOW', condition: 'false', notes: '', time: WINDOW })).policyId;
    const cron = (await api.createPolicy({ policyName: 'every minute', effect: 'EFFECT_ALLOW', condition: 'false', notes: '', time: "CronSpan('* * * * *', '1d', 'UTC')" })).policyId;

    const before = Date.now();
    const res = await client.getActivePolicies({ organizationId: org });
    const after = Date.now();
    expect(Number(res.evaluatedAtMs)).toBeGreaterThanOrEqual(before - 1000);
    expect(Number(res.evaluatedAtMs)).toBeLessThanOrEqual(after);
    expect(res.statuses).toEqual([
      { organizationId: org, policyId: always, active: true },
      { organizationId: org, policyId: ended, active: false, timeExpr: PAST },
      { organizationId: org, policyId: current, active: true, timeExpr: WINDOW },
      { organizationId: org, policyId: cron, active: true, timeExpr: "CronSpan('* * * * *', '1d', 'UTC')" },
    ]);

    // The engine agrees: the ended DENY on USER does not stop a user tag.
    expect((await api.createUserTag({ userTagName: 'allowed', userIds: [] })).activity.status).toBe('ACTIVITY_STATUS_COMPLETED');
  });

  it('reports a time expression that cannot be evaluated as inactive, with the reason', async () => {
    const api = sdkServerClient(sigil);
    const org = sigil.root.organizationId;
    const { policyId } = await api.createPolicy({ policyName: 'tightened later', effect: 'EFFECT_ALLOW', condition: 'false', notes: '', time: WINDOW });
    // As if a later Sigil no longer accepted the stored text (the request path fails such a field closed).
    await execSql(sigil, 'update policies set time = ?, updated_at = updated_at + 1 where id = ?', ['time.now > 5', policyId]);
    const { statuses } = await httpClient(sigil).getActivePolicies({ organizationId: org });
    expect(statuses.find((s) => s.policyId === policyId)).toEqual({
      organizationId: org,
      policyId,
      active: false,
      timeExpr: 'time.now > 5',
      error: expect.stringMatching(/^invalid policy time: /),
    });
  });

  it('shows an organization only its own policies, and refuses a body without organizationId', async () => {
    const api = sdkServerClient(sigil);
    const subKey = newKey();
    const created = await api.createSubOrganization({
      subOrganizationName: 'policy-free sub',
      rootUsers: [{ userName: 'sub root', apiKeys: [{ apiKeyName: 'k', publicKey: subKey.apiPublicKey, curveType: 'API_KEY_CURVE_P256' }], authenticators: [], oauthProviders: [] }],
      rootQuorumThreshold: 1,
    });
    expect((await httpClient(sigil, subKey).getActivePolicies({ organizationId: created.subOrganizationId })).statuses).toEqual([]);
    const bad = await rawPost(`${sigil.url}/public/v1/query/get_active_policies`, {}, { key: sigil.root });
    expect(bad.status).toBe(400);
  });
});
