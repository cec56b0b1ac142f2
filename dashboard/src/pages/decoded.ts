// The decoded view of a waiting signature (docs/policies.md "Approving what you see"), shown on the
// Pending and Activity pages: the server's `decodedView` (docs/policies.md "Approving what you see") as
// flags (the dangerous ones first and loudest), sections of label/value rows, the digests, the consensus
// beside it, and the exact payload that will be signed. Before anything is shown as checked and
// before every approval, ../integrity.ts recomputes the digests from the payload on the page with
// the dashboard's own code; a difference is an error and the approval is refused. Where the server
// simulated the transaction, what it does (./simulation.ts) comes right under what it says.
import type { Activity, Json } from '../api.js';
import { errorBox, facts, h, mono, pretty, replace } from '../dom.js';
import { canonicalJson, checkView, type View } from '../integrity.js';
import { simulationPanel, type SimulationView } from './simulation.js';

/** The payload(s) of a signing intent, as stored, and their encoding. */
export function signedPayloads(activity: Activity): { payloads: string[]; encoding?: string } {
  const intent = (Object.values(activity.intent ?? {})[0] ?? {}) as Json;
  if (typeof intent.unsignedTransaction === 'string') return { payloads: [intent.unsignedTransaction] };
  if (typeof intent.payload === 'string') return { payloads: [intent.payload], encoding: intent.encoding };
  if (Array.isArray(intent.payloads)) return { payloads: intent.payloads.map(String), encoding: intent.encoding };
  // A send names calls; its transaction is built when approved, so the intent itself is what is checked.
  if (typeof intent.caip2 === 'string' && (Array.isArray(intent.calls) || typeof intent.to === 'string')) return { payloads: [canonicalJson(intent)] };
  return { payloads: [] };
}

export interface DecodedPanel {
  element: HTMLElement;
  /** Recomputes the digests from the payload shown now; true when they all agree (the result is also shown). */
  verify(): Promise<boolean>;
  /** "send 1.5 ETH to 0x…", for the approve button. */
  summary?: string;
}

function consensusFacts(consensus: Json | undefined, activity: Activity): HTMLElement | null {
  if (!consensus) return null;
  const names = new Map<string, string>((activity.votes ?? []).map((v) => [v.userId, v.user?.userName || v.userId]));
  const policies = (consensus.policies ?? []) as Json[];
  const votes = (consensus.votes ?? []) as Json[];
  const quorum = consensus.rootQuorum ?? {};
  return h(
    'div',
    { className: 'consensus' },
    h('h3', {}, 'Consensus'),
    facts([
      ['Still needs', String(consensus.needs ?? '')],
      ['Root quorum', `${quorum.approvals ?? 0} of ${quorum.threshold ?? 0} approvals`],
      ['Votes so far', votes.length ? votes.map((v) => `${names.get(v.userId) ?? v.userId} ${pretty(String(v.selection), 'VOTE_SELECTION_').toLowerCase()}`).join(', ') : 'none'],
      ['Policies', policies.length ? policies.map((p) => `${p.policyName || p.policyId}: ${pretty(String(p.outcome), 'OUTCOME_').toLowerCase()}`).join('; ') : 'none applied (decided by the root quorum)'],
    ]),
  );
}

/** The panel for an activity with a `decodedView`; undefined for activities that sign nothing. */
export function decodedPanel(activity: Activity): DecodedPanel | undefined {
  const view = (activity as Activity & { decodedView?: View & { consensus?: Json; simulation?: SimulationView } }).decodedView;
  if (!view) return undefined;
  const simulation = simulationPanel(view.simulation);
  const { payloads, encoding } = signedPayloads(activity);
  const status = h('div', { className: 'integrity', 'aria-live': 'polite' });
  const payloadEls = payloads.map((p, i) => h('pre', { className: 'signed-payload mono', tabindex: '0', 'data-payload-index': String(i) }, p));
  if (view.error) {
    return {
      element: h('div', { className: 'decoded' }, errorBox(`Cannot decode what this activity signs: ${view.error}`), simulation, consensusFacts(view.consensus, activity)),
      verify: async () => false,
    };
  }
  const flags = (view.flags ?? []).map((f) => h('div', { className: f.severity === 'danger' ? 'flag flag-danger' : 'flag flag-warning', role: f.severity === 'danger' ? 'alert' : 'note', 'data-flag': f.code }, h('strong', {}, f.severity === 'danger' ? 'Danger: ' : 'Check: '), f.message));
  const sections = (view.sections ?? []).map((s) =>
    h('div', { className: 'decoded-section' }, h('h3', {}, s.title), facts(s.rows.map((r) => [r.label, [mono(r.value), r.note ? h('span', { className: 'hint' }, ` ${r.note}`) : null]]))),
  );
  const digests = (view.digests ?? []).map((d) => [`${(view.digests ?? []).length > 1 ? `Payload ${d.payloadIndex}: ` : ''}${d.algorithm} of ${d.over}`, mono(d.value)] as [string, HTMLElement]);
  const element = h(
    'div',
    { className: 'decoded', 'data-format': view.format ?? '' },
    h('p', { className: 'decoded-summary' }, h('strong', {}, 'Signs: '), view.summary ?? ''),
    flags,
    simulation,
    sections,
    h('div', { className: 'decoded-section' }, h('h3', {}, 'Digest'), facts(digests)),
    status,
    consensusFacts(view.consensus, activity),
    h('details', {}, h('summary', {}, view.format === 'ETHEREUM_SEND' ? 'Exact intent that will be sent (nonce, gas and fees are filled by Sigil when approved)' : 'Exact payload that will be signed'), payloadEls),
  );
  const verify = async () => {
    const shown = payloadEls.map((el) => el.textContent ?? '');
    let problems: string[];
    try {
      problems = await checkView(view, shown, encoding);
    } catch (err) {
      problems = [err instanceof Error ? err.message : String(err)];
    }
    if (problems.length) {
      replace(status, errorBox(`Integrity check failed: what is shown does not match the payload. ${problems.join('; ')}. Do not approve.`));
      status.dataset.integrity = 'mismatch';
      return false;
    }
    const browserChecked = (view.digests ?? []).some((d) => !['eip712', 'eip7702'].includes(d.over));
    replace(status, h('p', { className: 'integrity-ok' }, browserChecked ? '✓ Digest recomputed in this browser from the payload: it matches.' : 'Digest as computed by the server (typed data is not recomputed in the browser).'));
    status.dataset.integrity = browserChecked ? 'ok' : 'server';
    return true;
  };
  return { element, verify, summary: view.summary };
}
