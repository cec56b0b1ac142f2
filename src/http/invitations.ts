// Accepting an invitation (docs/sessions-and-logins.md "Invitations"): the two unstamped routes
// the dashboard's accept page (dashboard/src/pages/accept-invitation.ts) calls with the token from
// the emailed link. The invitee holds no credential yet, so the token is the only proof, and these
// are not pipeline operations: no stamp to verify, no policy to ask (whoever sent the invitation
// was allowed INVITATION / CREATE by the pipeline), and the acceptance is recorded on the
// invitation itself (ACCEPTED, the new user's id) and as an audit log entry of kind `invitation`
// (who joined, through which invitation, with which passkey) rather than as an activity.
//  - POST /sigil/v1/get_invitation {token}: the organization and the invitation the token opens,
//    so the page can say who is invited where before asking for a passkey.
//  - POST /sigil/v1/accept_invitation {token, authenticator: v1AuthenticatorParamsV2}: creates the
//    user with that passkey and spends the token (src/domain/identity/invitations.ts).
// The token never reaches a log line: bodies are not logged, and errors never echo it.
import type { FastifyInstance } from 'fastify';
import { appendAudit, invitationAcceptedEntry } from '../audit/record.js';
import type { Services } from '../domain/context.js';
import { acceptInvitation, describeInvitation } from '../domain/identity/invitations.js';
import { badRequestDetail, invalid } from '../errors/errors.js';
import { parseBody } from '../pipeline/envelope.js';
import type { JsonLimits } from '../pipeline/input-limits.js';
import { describeErrors, validatorOf } from '../schemas/index.js';
import type { Store } from '../store/index.js';
import type { AuthenticatorParams } from '../domain/identity/authenticators.js';
import { requireJsonBody } from './transport.js';

export interface InvitationRoutes {
  store: Store;
  services: Services;
  limits: JsonLimits;
}

function checkAuthenticator(value: unknown): AuthenticatorParams {
  const v = validatorOf('v1AuthenticatorParamsV2');
  if (v(value)) return value as AuthenticatorParams;
  const violations = describeErrors(v.errors, 'authenticator');
  throw invalid(`bad request body: ${violations[0].field}: ${violations[0].description}`, [badRequestDetail(violations)]);
}

export function registerInvitationRoutes(app: FastifyInstance<any, any, any, any>, deps: InvitationRoutes): void {
  app.post('/sigil/v1/get_invitation', { onRequest: requireJsonBody }, async (req) => {
    const body = parseBody(req.body as Buffer, deps.limits);
    return describeInvitation(deps.store.repos, body.token, Date.now());
  });
  app.post('/sigil/v1/accept_invitation', { onRequest: requireJsonBody }, async (req) => {
    const body = parseBody(req.body as Buffer, deps.limits);
    const authenticator = checkAuthenticator(body.authenticator);
    const now = Date.now();
    const result = await acceptInvitation(
      {
        transaction: (fn) => deps.store.transaction(fn),
        services: deps.services,
        now,
        record: (repos, accepted) => appendAudit(repos, invitationAcceptedEntry({ ...accepted, time: now })),
      },
      body.token,
      authenticator,
    );
    req.log.info({ organizationId: result.organizationId, invitationId: result.invitationId, userId: result.userId }, 'invitation accepted');
    return result;
  });
}
