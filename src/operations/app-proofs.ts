// App proof queries (docs/reference/api.md "Activities"; docs/reference/activities.md "App proofs and events"): list_app_proofs for
// an activity, get_boot_proof by ephemeral key, get_latest_boot_proof.
import { notFound } from '../errors/errors.js';
import { defineQuery } from './define.js';

export const listAppProofsOp = defineQuery<{ organizationId: string; activityId: string }, unknown>({
  path: 'list_app_proofs',
  request: 'v1GetAppProofsRequest',
  execute: async (ctx, b) => {
    const row = await ctx.repos.activities.get(ctx.organization.id, b.activityId);
    if (!row) throw notFound(`activity not found: ${b.activityId}`);
    return { appProofs: row.app_proofs ? JSON.parse(row.app_proofs) : [] };
  },
});

export const getBootProofOp = defineQuery<{ organizationId: string; ephemeralKey: string }, unknown>({
  path: 'get_boot_proof',
  request: 'v1GetBootProofRequest',
  execute: async (ctx, b) => {
    const row = await ctx.repos.bootProofs.get(b.ephemeralKey.toLowerCase());
    if (!row) throw notFound(`boot proof not found for ephemeral key ${b.ephemeralKey.slice(0, 16)}…`);
    return { bootProof: JSON.parse(row.boot_proof) };
  },
});

export const getLatestBootProofOp = defineQuery<{ organizationId: string; appName: string }, unknown>({
  path: 'get_latest_boot_proof',
  request: 'v1GetLatestBootProofRequest',
  execute: async (ctx) => {
    const row = await ctx.repos.bootProofs.latest();
    if (!row) throw notFound('no boot proof recorded yet');
    return { bootProof: JSON.parse(row.boot_proof) };
  },
});
