// The submit answer written as text (src/activity/record.ts renderActivityText, docs/design.md "The
// hot path"): for every shape of activity row it is byte for byte what serializing the rendered
// record gives, so the official clients read the same answer whichever way it was written.
import { describe, expect, it } from 'vitest';
import { renderActivity, renderActivityText } from '../../src/activity/record.js';
import type { ActivityRow, VoteRow } from '../../src/store/index.js';

const T = 1_795_827_038_086;

function row(over: Partial<ActivityRow> = {}): ActivityRow {
  return {
    id: 'a1',
    organization_id: 'o1',
    type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
    status: 'ACTIVITY_STATUS_COMPLETED',
    fingerprint: 'sha256:00',
    intent: JSON.stringify({ signRawPayloadIntentV2: { signWith: '0xA0', payload: 'ab', encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP', n: 1e21, u: 'é\u2028"\\\ud800' } }),
    result: JSON.stringify({ signRawPayloadResult: { r: '01', s: '02', v: '00' } }),
    failure: null,
    pending_parameters: null,
    app_proofs: null,
    user_id: 'u1',
    timestamp_ms: T - 40,
    created_at: T,
    updated_at: T + 1001,
    ...over,
  };
}

function vote(over: Partial<VoteRow> = {}): VoteRow {
  return {
    id: 'v1',
    activity_id: 'a1',
    organization_id: 'o1',
    user_id: 'u1',
    selection: 'VOTE_SELECTION_APPROVED',
    message: '{"type":"x","parameters":{"a":"\\u0001"}}',
    public_key: '02ab',
    signature: '3046',
    scheme: 'SIGNATURE_SCHEME_TK_API_P256',
    created_at: T,
    ...over,
  };
}

const user = Object.freeze({ userId: 'u1', userName: 'Root user', authenticators: [], apiKeys: [], userTags: [], oauthProviders: [], createdAt: { seconds: '1', nanos: '0' }, updatedAt: { seconds: '1', nanos: '0' }, mfaPolicies: [] });

describe('an activity written as text', () => {
  const cases: [string, ActivityRow, VoteRow[], Map<string, unknown>, { userId: string } | undefined][] = [
    ['a completed signature with its voter', row(), [vote()], new Map([['u1', user]]), { userId: 'u1' }],
    ['the voter rendered twice (cached text)', row(), [vote()], new Map([['u1', user]]), { userId: 'u1' }],
    ['a voter no longer known', row(), [vote({ user_id: 'gone' })], new Map(), { userId: 'u1' }],
    ['a vote without a signature or scheme', row(), [vote({ signature: undefined as unknown as string, scheme: undefined as unknown as string })], new Map([['u1', user]]), undefined],
    ['a failure and app proofs', row({ status: 'ACTIVITY_STATUS_FAILED', result: null, failure: JSON.stringify({ code: 3, message: 'no' }), app_proofs: JSON.stringify([{ scheme: 'x' }]) }), [vote()], new Map([['u1', user]]), { userId: 'u1' }],
    ['waiting for consensus, seen by another user', row({ status: 'ACTIVITY_STATUS_CONSENSUS_NEEDED', result: null }), [vote()], new Map([['u1', user]]), { userId: 'u2' }],
    ['waiting for its submitter\u2019s authenticators', row({ status: 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED', result: null }), [vote()], new Map([['u1', user]]), { userId: 'u1' }],
    ['an empty result', row({ result: '{}' }), [], new Map(), { userId: 'u1' }],
    ['a result with a member named activity', row({ result: JSON.stringify({ x: 1, activity: 2 }) }), [vote()], new Map([['u1', user]]), { userId: 'u1' }],
    ['two votes', row(), [vote(), vote({ id: 'v2', user_id: 'u2', created_at: T + 7 })], new Map<string, unknown>([['u1', user], ['u2', { ...user, userId: 'u2' }]]), { userId: 'u2' }],
  ];
  for (const [name, r, votes, users, viewer] of cases) {
    it(`is what serializing the record gives: ${name}`, () => {
      expect(renderActivityText(r, votes, users, viewer)).toBe(JSON.stringify(renderActivity(r, votes, users, viewer)));
    });
  }
});
