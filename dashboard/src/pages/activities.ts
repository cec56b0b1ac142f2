// Activities: a filterable list (list_activities with filterByStatus / filterByType and cursor
// pagination, newest first) and one activity in detail (get_activity: intent, result, failure,
// votes; get_policy_evaluations: each policy's outcome per vote, policy names from list_policies).
import type { Activity, Json } from '../api.js';
import type { PageContext } from './context.js';
import { badge, empty, errorBox, facts, field, h, heading, json, loading, mono, pretty, replace, select, time } from '../dom.js';
import { decodedPanel } from './decoded.js';
import { voteButtons } from './vote.js';

export const STATUSES = [
  'ACTIVITY_STATUS_CREATED',
  'ACTIVITY_STATUS_PENDING',
  'ACTIVITY_STATUS_COMPLETED',
  'ACTIVITY_STATUS_FAILED',
  'ACTIVITY_STATUS_CONSENSUS_NEEDED',
  'ACTIVITY_STATUS_REJECTED',
  'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED',
];

const PAGE_SIZE = '25';

const SCHEMES: Record<string, string> = {
  SIGNATURE_SCHEME_TK_API_P256: 'API key (P-256)',
  SIGNATURE_SCHEME_TK_API_SECP256K1_EIP191: 'Wallet (Ethereum)',
  SIGNATURE_SCHEME_TK_API_ED25519: 'Wallet (Ed25519)',
  SIGNATURE_SCHEME_TK_API_WEBAUTHN: 'Passkey',
};
const schemeLabel = (scheme: string) => SCHEMES[scheme] ?? pretty(scheme, 'SIGNATURE_SCHEME_');

/** Who submitted: the first vote is the submitter's. */
export const submitter = (a: Activity) => a.votes?.[0]?.user?.userName ?? a.votes?.[0]?.userId ?? '';

export function activityRow(a: Activity): HTMLTableRowElement {
  return h(
    'tr',
    {},
    h('td', { 'data-label': 'Type' }, h('a', { href: `#/activities/${encodeURIComponent(a.id)}` }, pretty(a.type, 'ACTIVITY_TYPE_'))),
    h('td', { 'data-label': 'Status' }, badge(a.status)),
    h('td', { 'data-label': 'By' }, submitter(a)),
    h('td', { 'data-label': 'Created' }, time(a.createdAt)),
  );
}

export function activityTable(rows: HTMLTableRowElement[]): HTMLElement {
  return h(
    'div',
    { className: 'table-wrap' },
    h(
      'table',
      { className: 'activities' },
      h('thead', {}, h('tr', {}, h('th', { scope: 'col' }, 'Type'), h('th', { scope: 'col' }, 'Status'), h('th', { scope: 'col' }, 'By'), h('th', { scope: 'col' }, 'Created'))),
      h('tbody', {}, ...rows),
    ),
  );
}

export async function activitiesPage(ctx: PageContext): Promise<void> {
  const params = new URLSearchParams(sessionStorage.getItem('sigil.activity-filter') ?? '');
  const status = select('status', [['', 'Any status'], ...STATUSES.map((s): [string, string] => [s, pretty(s, 'ACTIVITY_STATUS_')])], params.get('status') ?? '');
  const type = h('input', { type: 'text', name: 'type', autocomplete: 'off', spellcheck: 'false', value: params.get('type') ?? '', placeholder: 'e.g. SIGN_RAW_PAYLOAD_V2' });
  const apply = h('button', { type: 'submit' }, 'Filter');
  const filters = h('form', { className: 'card filters', 'aria-label': 'Filter activities' }, h('div', { className: 'row' }, field('Status', status), field('Type', type, 'An ACTIVITY_TYPE_ value, with or without the prefix.')), apply);
  const body = h('div', {}, loading());
  ctx.main.append(heading('Activities'), filters, body);

  const rows: HTMLTableRowElement[] = [];
  const more = h('button', { type: 'button', className: 'secondary' }, 'Older activities');
  const load = async (after?: string) => {
    const t = type.value.trim().toUpperCase();
    const res = await ctx.api.query<Json>('list_activities', {
      ...(status.value ? { filterByStatus: [status.value] } : {}),
      ...(t ? { filterByType: [t.startsWith('ACTIVITY_TYPE_') ? t : `ACTIVITY_TYPE_${t}`] } : {}),
      paginationOptions: { limit: PAGE_SIZE, ...(after ? { after } : {}) },
    });
    const page = res.activities as Activity[];
    rows.push(...page.map(activityRow));
    if (!rows.length) return replace(body, empty('No activities match these filters.'));
    more.hidden = page.length < Number(PAGE_SIZE);
    more.onclick = () => void load(page[page.length - 1].id).catch((err) => body.append(errorBox(String(err))));
    replace(body, activityTable(rows), more);
  };
  filters.addEventListener('submit', (e) => {
    e.preventDefault();
    sessionStorage.setItem('sigil.activity-filter', new URLSearchParams({ status: status.value, type: type.value.trim() }).toString());
    ctx.refresh();
  });
  await load();
}

export async function activityPage(ctx: PageContext, activityId: string): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Activity', h('a', { href: '#/activities', className: 'back' }, 'All activities')), body);
  const [{ activity }, evaluations, { policies }] = await Promise.all([
    ctx.api.query<{ activity: Activity }>('get_activity', { activityId }),
    ctx.api.query<Json>('get_policy_evaluations', { activityId }),
    ctx.api.query<Json>('list_policies'),
  ]);
  const policyNames = new Map<string, string>((policies as Json[]).map((p) => [p.policyId, p.policyName]));
  const a = activity;
  const voteOf = new Map<string, Json>((a.votes ?? []).map((v) => [v.id, v]));

  const votes = (a.votes ?? []).length
    ? h(
        'div',
        { className: 'table-wrap' },
        h(
          'table',
          {},
          h('thead', {}, h('tr', {}, ...['User', 'Vote', 'Credential', 'When'].map((c) => h('th', { scope: 'col' }, c)))),
          h(
            'tbody',
            {},
            ...a.votes.map((v) =>
              h(
                'tr',
                {},
                h('td', { 'data-label': 'User' }, v.user?.userName ?? v.userId),
                h('td', { 'data-label': 'Vote' }, pretty(v.selection, 'VOTE_SELECTION_')),
                h('td', { 'data-label': 'Credential' }, schemeLabel(String(v.scheme)), ' ', mono(String(v.publicKey).slice(0, 20) + '…')),
                h('td', { 'data-label': 'When' }, time(v.createdAt)),
              ),
            ),
          ),
        ),
      )
    : empty('No votes.');

  const evals = (evaluations.policyEvaluations ?? []) as Json[];
  const evaluationList = evals.length
    ? h(
        'ul',
        { className: 'plain' },
        ...evals.map((e) => {
          const vote = voteOf.get(e.voteId);
          return h(
            'li',
            {},
            h('strong', {}, vote ? `After ${vote.user?.userName ?? vote.userId}'s vote` : 'Evaluation'),
            h('span', { className: 'hint' }, ` · ${time(e.createdAt)}`),
            (e.policyEvaluations ?? []).length
              ? h('ul', {}, ...(e.policyEvaluations as Json[]).map((pe) => h('li', {}, policyNames.get(pe.policyId) ?? pe.policyId, ': ', pretty(String(pe.outcome), 'OUTCOME_'))))
              : h('p', { className: 'hint' }, 'No policy applied (decided by the root quorum or self-service rules).'),
          );
        }),
      )
    : empty('No policy evaluations recorded.');

  // Waiting for votes, or for its submitter's MFA methods (approved by the submitter's passkey).
  const waiting = a.status === 'ACTIVITY_STATUS_CONSENSUS_NEEDED' || a.status === 'ACTIVITY_STATUS_AUTHENTICATORS_NEEDED';
  const decoded = decodedPanel(a);
  // The result's own members only; the server may echo the activity inside it, shown above already.
  const result = Object.fromEntries(Object.entries(a.result ?? {}).filter(([k]) => k !== 'activity'));
  replace(
    body,
    h(
      'section',
      { className: 'card' },
      h('h2', {}, pretty(a.type, 'ACTIVITY_TYPE_'), ' ', badge(a.status)),
      facts([
        ['ID', mono(a.id)],
        ['Type', mono(a.type)],
        ['Organization', mono(a.organizationId)],
        ['Created', time(a.createdAt)],
        ['Updated', time(a.updatedAt)],
        ['Fingerprint', mono(a.fingerprint)],
      ]),
      waiting
        ? voteButtons(
            ctx,
            a,
            (text) => {
              ctx.flash(text);
              ctx.refresh();
            },
            decoded,
          )
        : null,
    ),
    decoded ? h('section', { className: 'card' }, h('h2', {}, 'What it signs'), decoded.element) : null,
    a.failure ? h('section', { className: 'card' }, h('h2', {}, 'Failure'), errorBox(a.failure.message)) : null,
    h('section', { className: 'card' }, h('h2', {}, 'Intent'), json(a.intent)),
    h('section', { className: 'card' }, h('h2', {}, 'Result'), Object.keys(result).length ? json(result) : empty(waiting ? 'No result yet: the activity waits for votes.' : 'No result.')),
    h('section', { className: 'card' }, h('h2', {}, 'Votes'), votes),
    h('section', { className: 'card' }, h('h2', {}, 'Policy evaluations'), evaluationList),
  );
  await decoded?.verify();
}
