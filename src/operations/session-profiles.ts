// Session profile operations (swagger v1CreateSessionProfileIntent → v1CreateSessionProfileResult,
// v1GetSessionProfileRequest/Response, v1GetSessionProfilesRequest/Response): create_session_profile,
// get_session_profile, get_session_profiles. The login activities that name a profile
// (stamp_login, otp_login, oauth_login) and the scope check are in src/domain/identity/sessions.ts and
// src/activity/authorize.ts.
//
// Policy resource and action: SESSION_PROFILE / CREATE, the resource docs/reference/policies.md "Keywords"
// lists (its table has no row for the kind; recorded as deliberate in test/vectors/activity-resources.json).
import { createSessionProfile, listSessionProfiles, requireSessionProfile, sessionProfileRecord, type CreateSessionProfileParams } from '../domain/identity/session-profiles.js';
import { defineActivity, defineQuery } from './define.js';

export const createSessionProfileOp = defineActivity<CreateSessionProfileParams, { sessionProfileId: string }>({
  path: 'create_session_profile',
  type: 'ACTIVITY_TYPE_CREATE_SESSION_PROFILE',
  result: 'createSessionProfileResult',
  policy: { resource: 'SESSION_PROFILE', action: 'CREATE' },
  execute: (ctx, p) => createSessionProfile(ctx, p),
});

export const getSessionProfileOp = defineQuery<{ organizationId: string; sessionProfileId: string }, unknown>({
  path: 'get_session_profile',
  request: 'v1GetSessionProfileRequest',
  execute: async (ctx, b) => ({ sessionProfile: sessionProfileRecord(await requireSessionProfile(ctx.repos, ctx.organization, b.sessionProfileId)) }),
});

export const getSessionProfilesOp = defineQuery<{ organizationId: string }, unknown>({
  path: 'get_session_profiles',
  request: 'v1GetSessionProfilesRequest',
  execute: async (ctx) => ({ sessionProfiles: (await listSessionProfiles(ctx.repos, ctx.organization)).map(sessionProfileRecord) }),
});
