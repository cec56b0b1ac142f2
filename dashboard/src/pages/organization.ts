// Organization page: name and id (get_organization), the root quorum and features
// (get_organization_configs), and the sub-organizations (list_suborgs).
import type { Json } from '../api.js';
import type { PageContext } from './context.js';
import { empty, facts, h, heading, loading, mono, pretty, replace } from '../dom.js';

export async function organizationPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Organization'), body);
  const [{ organizationData: org }, { configs }, { organizationIds }] = await Promise.all([
    ctx.api.query<Json>('get_organization'),
    ctx.api.query<Json>('get_organization_configs'),
    ctx.api.query<Json>('list_suborgs'),
  ]);
  const names = new Map<string, string>((org.users ?? []).map((u: Json) => [u.userId, u.userName]));
  const quorum = configs?.quorum ?? org.rootQuorum ?? { threshold: 0, userIds: [] };
  const features: Json[] = configs?.features ?? [];

  const quorumList = h('ul', { className: 'plain' });
  for (const id of quorum.userIds ?? []) quorumList.append(h('li', {}, names.get(id) ?? '', ' ', mono(id)));

  const subs = (organizationIds as string[]).length
    ? h('ul', { className: 'plain' }, ...(organizationIds as string[]).map((id) => h('li', {}, mono(id))))
    : empty('No sub-organizations.', 'Create them with create_sub_organization (the SDK, or "sigil request").');

  replace(
    body,
    h(
      'section',
      { className: 'card', 'aria-labelledby': 'org-title' },
      h('h2', { id: 'org-title' }, org.name),
      facts([
        ['Organization ID', mono(org.organizationId)],
        ['Users', String((org.users ?? []).length)],
        ['Signed in as', `${ctx.api.session.username} (${{ 'api-key': 'API key', passkey: 'passkey', otp: 'email code' }[ctx.api.session.method]})`],
      ]),
    ),
    h(
      'section',
      { className: 'card', 'aria-labelledby': 'quorum-title' },
      h('h2', { id: 'quorum-title' }, 'Root quorum'),
      h('p', {}, `${quorum.threshold} of ${(quorum.userIds ?? []).length} root users must approve root activities.`),
      quorumList,
    ),
    h(
      'section',
      { className: 'card', 'aria-labelledby': 'features-title' },
      h('h2', { id: 'features-title' }, 'Features'),
      features.length
        ? h('ul', { className: 'plain' }, ...features.map((f) => h('li', {}, pretty(String(f.name), 'FEATURE_NAME_'), f.value ? ` = ${f.value}` : '')))
        : empty('No organization features set.'),
    ),
    h('section', { className: 'card', 'aria-labelledby': 'subs-title' }, h('h2', { id: 'subs-title' }, 'Sub-organizations'), subs),
  );
}
