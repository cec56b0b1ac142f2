// Policies page: the organization's policies (list_policies), a form to create one (create_policy
// V3) and to edit one in place (update_policy V2, swagger v1UpdatePolicyIntentV2). The server checks
// condition and consensus when they are submitted; its message (say "invalid policy condition: 1:5:
// …") is shown inline beside the form, and nothing is changed.
import type { Json } from '../api.js';
import type { PageContext } from './context.js';
import { busy, empty, errorBox, field, h, heading, loading, message, mono, pretty, replace, select, time } from '../dom.js';

interface PolicyFields {
  policyName: string;
  effect: string;
  condition: string;
  consensus: string;
  notes: string;
}

function policyForm(opts: { title: string; submitLabel: string; initial?: Partial<PolicyFields>; save: (f: PolicyFields) => Promise<string>; cancel?: () => void }): HTMLFormElement {
  const i = opts.initial ?? {};
  const name = h('input', { type: 'text', name: 'policyName', required: true, autocomplete: 'off', value: i.policyName ?? '' });
  const effect = select('effect', [['EFFECT_ALLOW', 'Allow'], ['EFFECT_DENY', 'Deny']], i.effect ?? 'EFFECT_ALLOW');
  const condition = h('textarea', { name: 'condition', rows: 3, spellcheck: 'false' }, i.condition ?? '');
  const consensus = h('textarea', { name: 'consensus', rows: 2, spellcheck: 'false' }, i.consensus ?? '');
  const notes = h('input', { type: 'text', name: 'notes', autocomplete: 'off', value: i.notes ?? '' });
  const button = h('button', { type: 'submit' }, opts.submitLabel);
  const out = h('div', { className: 'form-result', 'aria-live': 'polite' });
  const titleId = `policy-form-${Math.random().toString(36).slice(2)}`;
  const form = h(
    'form',
    { className: 'card policy-form', 'aria-labelledby': titleId },
    h('h2', { id: titleId }, opts.title),
    h('div', { className: 'row' }, field('Name', name), field('Effect', effect)),
    field('Condition', condition, "e.g. activity.resource == 'PRIVATE_KEY' && activity.action == 'SIGN'"),
    field('Consensus', consensus, "e.g. approvers.count() >= 2"),
    field('Notes', notes),
    h('div', { className: 'actions' }, button, opts.cancel ? h('button', { type: 'button', className: 'secondary', onclick: opts.cancel }, 'Cancel') : null),
    out,
  );
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(button, async () => {
      replace(out);
      try {
        if (!name.value.trim()) throw new Error('Enter a policy name.');
        const text = await opts.save({ policyName: name.value.trim(), effect: effect.value, condition: condition.value.trim(), consensus: consensus.value.trim(), notes: notes.value.trim() });
        replace(out, h('div', { className: 'notice', role: 'status' }, text));
      } catch (err) {
        // The server's own words: the parse error names the line and column of the mistake.
        replace(out, errorBox(message(err)));
        condition.setAttribute('aria-invalid', /condition/i.test(message(err)) ? 'true' : 'false');
        consensus.setAttribute('aria-invalid', /consensus/i.test(message(err)) ? 'true' : 'false');
      }
    });
  });
  return form;
}

const waitNote = (status: string) => (status === 'ACTIVITY_STATUS_COMPLETED' ? '' : ` (${pretty(status, 'ACTIVITY_STATUS_')}: it takes effect once approved)`);

export async function policiesPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  const create = policyForm({
    title: 'Create a policy',
    submitLabel: 'Create policy',
    save: async (f) => {
      const activity = await ctx.api.submit('create_policy', 'ACTIVITY_TYPE_CREATE_POLICY_V3', {
        policyName: f.policyName,
        effect: f.effect,
        notes: f.notes,
        ...(f.condition ? { condition: f.condition } : {}),
        ...(f.consensus ? { consensus: f.consensus } : {}),
      });
      ctx.flash(`Policy "${f.policyName}" created${waitNote(activity.status)}.`);
      ctx.refresh();
      return 'Created.';
    },
  });
  ctx.main.append(heading('Policies'), create, body);
  const { policies } = await ctx.api.query<Json>('list_policies');
  if (!policies.length) return replace(body, empty('No policies yet.', 'Without policies only the root quorum can act; other users may still manage their own credentials.'));
  const list = h('ul', { className: 'cards' });
  for (const p of policies as Json[]) {
    const item = h('li', { className: 'card policy-card', 'data-policy-id': p.policyId });
    const view = () => {
      const editButton = h('button', { type: 'button', className: 'secondary' }, 'Edit');
      const deleteButton = h('button', { type: 'button', className: 'danger' }, 'Delete');
      const out = h('div', { 'aria-live': 'polite' });
      editButton.addEventListener('click', () => {
        const form = policyForm({
          title: `Edit "${p.policyName}"`,
          submitLabel: 'Save changes',
          initial: { policyName: p.policyName, effect: p.effect, condition: p.condition, consensus: p.consensus, notes: p.notes },
          cancel: view,
          save: async (f) => {
            const activity = await ctx.api.submit('update_policy', 'ACTIVITY_TYPE_UPDATE_POLICY_V2', {
              policyId: p.policyId,
              policyName: f.policyName,
              policyEffect: f.effect,
              policyCondition: f.condition,
              policyConsensus: f.consensus,
              policyNotes: f.notes,
            });
            ctx.flash(`Policy "${f.policyName}" saved${waitNote(activity.status)}.`);
            ctx.refresh();
            return 'Saved.';
          },
        });
        replace(item, form);
        (form.querySelector('input') as HTMLInputElement).focus();
      });
      deleteButton.addEventListener('click', () => {
        if (!confirm(`Delete the policy "${p.policyName}"?`)) return;
        void busy(deleteButton, async () => {
          try {
            const activity = await ctx.api.submit('delete_policy', 'ACTIVITY_TYPE_DELETE_POLICY', { policyId: p.policyId });
            ctx.flash(`Policy "${p.policyName}" deleted${waitNote(activity.status)}.`);
            ctx.refresh();
          } catch (err) {
            replace(out, errorBox(message(err)));
          }
        });
      });
      replace(
        item,
        h('h2', {}, p.policyName, ' ', h('span', { className: `tag effect-${p.effect === 'EFFECT_DENY' ? 'deny' : 'allow'}` }, pretty(p.effect, 'EFFECT_'))),
        h('dl', { className: 'facts' },
          h('dt', {}, 'Condition'), h('dd', {}, p.condition ? h('code', { className: 'mono' }, p.condition) : h('span', { className: 'hint' }, 'always')),
          h('dt', {}, 'Consensus'), h('dd', {}, p.consensus ? h('code', { className: 'mono' }, p.consensus) : h('span', { className: 'hint' }, 'none')),
          h('dt', {}, 'Notes'), h('dd', {}, p.notes || ''),
          h('dt', {}, 'ID'), h('dd', {}, mono(p.policyId), h('span', { className: 'hint' }, ` · updated ${time(p.updatedAt)}`)),
        ),
        h('div', { className: 'actions' }, editButton, deleteButton),
        out,
      );
    };
    view();
    list.append(item);
  }
  replace(body, list);
}
