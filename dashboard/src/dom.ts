// Small DOM helpers for the dashboard. Every value from the server goes in as text (textContent or
// attribute values), never as HTML, so nothing an API user stores (names, notes, policy text) can
// run as script; the Content-Security-Policy (src/http/dashboard.ts) forbids inline script anyway.

type Child = Node | string | number | null | undefined | false;
type Attrs = Record<string, string | number | boolean | undefined | null | EventListener>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, attrs: Attrs = {}, ...children: (Child | Child[])[]): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on') && typeof value === 'function') el.addEventListener(name.slice(2), value as EventListener);
    else if (name === 'className') el.className = String(value);
    else if (value === true) el.setAttribute(name, '');
    else el.setAttribute(name, String(value));
  }
  append(el, children);
  return el;
}

export function append(el: Element, children: (Child | Child[])[]): void {
  for (const c of children.flat()) {
    if (c === null || c === undefined || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

export function replace(el: Element, ...children: (Child | Child[])[]): void {
  el.replaceChildren();
  append(el, children);
}

let idCounter = 0;
export const uid = (prefix: string) => `${prefix}-${++idCounter}`;

/** A labelled form field; the label's `for` ties it to the control for screen readers and clicks. */
export function field(label: string, control: HTMLInputElement | HTMLSelectElement | HTMLTextAreaElement, hint?: string): HTMLElement {
  if (!control.id) control.id = uid('f');
  const hintEl = hint ? h('small', { className: 'hint', id: `${control.id}-hint` }, hint) : null;
  if (hintEl) control.setAttribute('aria-describedby', hintEl.id);
  return h('div', { className: 'field' }, h('label', { for: control.id }, label), control, hintEl);
}

export function select(name: string, options: [string, string][], value?: string): HTMLSelectElement {
  const s = h('select', { name });
  for (const [v, text] of options) s.append(h('option', { value: v, selected: v === value }, text));
  return s;
}

export const heading = (text: string, ...extra: Child[]) => h('div', { className: 'page-head' }, h('h1', { tabindex: '-1', id: 'page-title' }, text), ...extra);

export const empty = (text: string, hint?: string) => h('div', { className: 'empty', role: 'status' }, h('p', {}, text), hint ? h('p', { className: 'hint' }, hint) : null);

export const errorBox = (text: string) => h('div', { className: 'error', role: 'alert' }, text);

export const notice = (text: string) => h('div', { className: 'notice', role: 'status' }, text);

export const loading = () => h('p', { className: 'loading', role: 'status' }, 'Loading…');

/** A monospaced value that wraps on narrow screens (ids, keys, addresses). */
export const mono = (text: string) => h('code', { className: 'mono' }, text);

export const json = (value: unknown) => h('pre', { className: 'json', tabindex: '0' }, JSON.stringify(value, null, 2));

/** A definition list of label → value rows. */
export function facts(rows: [string, Child | Child[]][]): HTMLDListElement {
  const dl = h('dl', { className: 'facts' });
  for (const [k, v] of rows) dl.append(h('dt', {}, k), h('dd', {}, ...(Array.isArray(v) ? v : [v])));
  return dl;
}

export function time(ts: { seconds?: string } | undefined): string {
  const s = Number(ts?.seconds);
  if (!Number.isFinite(s) || s <= 0) return '';
  return new Date(s * 1000).toLocaleString();
}

/**
 * An amount in base units (a decimal string, as chain data gives it) in whole units with thousands
 * separators: ("1200000000", 6) → "1,200". Exact for any size (BigInt, never a float). Without
 * `decimals` the base units themselves are shown, grouped the same way.
 */
export function formatUnits(amount: string, decimals?: number): string {
  if (!/^-?\d+$/.test(amount)) return amount;
  const negative = amount.startsWith('-');
  const digits = (negative ? amount.slice(1) : amount).replace(/^0+(?=\d)/, '');
  const d = decimals !== undefined && Number.isInteger(decimals) && decimals > 0 ? decimals : 0;
  const padded = digits.padStart(d + 1, '0');
  const whole = padded.slice(0, padded.length - d).replace(/\B(?=(\d{3})+(?!\d))/g, ',');
  const fraction = padded.slice(padded.length - d).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}

/** Short names for enum values: ACTIVITY_STATUS_CONSENSUS_NEEDED → Consensus needed. */
export function pretty(value: string, prefix: string): string {
  const s = value.startsWith(prefix) ? value.slice(prefix.length) : value;
  return s.charAt(0) + s.slice(1).toLowerCase().replace(/_/g, ' ');
}

export function badge(status: string): HTMLElement {
  const kind = status.replace('ACTIVITY_STATUS_', '').toLowerCase().replace(/_/g, '-');
  return h('span', { className: `badge badge-${kind}` }, pretty(status, 'ACTIVITY_STATUS_'));
}

/** Runs `work` while `button` shows it is busy; the button cannot be pressed twice meanwhile. */
export async function busy<T>(button: HTMLButtonElement, work: () => Promise<T>): Promise<T> {
  const label = button.textContent;
  button.disabled = true;
  button.setAttribute('aria-busy', 'true');
  button.textContent = `${label}…`;
  try {
    return await work();
  } finally {
    button.disabled = false;
    button.removeAttribute('aria-busy');
    button.textContent = label;
  }
}

export const message = (err: unknown) => (err instanceof Error ? err.message : String(err));

/**
 * The form pattern of every page: on submit, `button` is busy, `out` is emptied, `work` runs and
 * whatever it throws shows in `out` after `failure` ("Could not …").
 */
export function onSubmit(form: HTMLFormElement, button: HTMLButtonElement, out: HTMLElement, failure: string, work: () => Promise<void>): void {
  form.addEventListener('submit', (e) => {
    e.preventDefault();
    void busy(button, async () => {
      replace(out);
      try {
        await work();
      } catch (err) {
        replace(out, errorBox(`${failure}: ${message(err)}`));
      }
    });
  });
}
