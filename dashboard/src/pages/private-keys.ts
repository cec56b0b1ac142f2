// Private keys page: every private key (list_private_keys) with its curve, public key, addresses and
// tags (names from list_private_key_tags).
import type { Json } from '../api.js';
import type { PageContext } from './context.js';
import { empty, h, heading, loading, mono, pretty, replace, time } from '../dom.js';

export async function privateKeysPage(ctx: PageContext): Promise<void> {
  const body = h('div', {}, loading());
  ctx.main.append(heading('Private keys'), body);
  const [{ privateKeys }, tagList] = await Promise.all([ctx.api.query<Json>('list_private_keys'), ctx.api.query<Json>('list_private_key_tags')]);
  const tagNames = new Map<string, string>((tagList.privateKeyTags ?? []).map((t: Json) => [t.tagId, t.tagName]));
  if (!privateKeys.length) return replace(body, empty('No private keys.', 'Create them with create_private_keys (the SDK, or "sigil request").'));
  const list = h('ul', { className: 'cards' });
  for (const k of privateKeys as Json[]) {
    list.append(
      h(
        'li',
        { className: 'card' },
        h('h2', {}, k.privateKeyName),
        h('p', { className: 'hint' }, mono(k.privateKeyId), ` · ${pretty(k.curve, 'CURVE_')} · created ${time(k.createdAt)}`, k.exported ? ' · exported' : '', k.imported ? ' · imported' : ''),
        h('p', {}, 'Public key ', mono(k.publicKey)),
        (k.privateKeyTags ?? []).length ? h('p', { className: 'tags' }, ...(k.privateKeyTags as string[]).map((id) => h('span', { className: 'tag' }, tagNames.get(id) ?? id))) : null,
        (k.addresses ?? []).length
          ? h('ul', { className: 'plain' }, ...(k.addresses as Json[]).map((a) => h('li', {}, h('span', { className: 'hint' }, `${pretty(a.format, 'ADDRESS_FORMAT_')} `), mono(a.address))))
          : h('p', { className: 'hint' }, 'No addresses.'),
      ),
    );
  }
  replace(body, list);
}
