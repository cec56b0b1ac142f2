// GET /metrics (docs/operator-guide.md "Audit trail and metrics") on a real `sigil serve`: Prometheus
// text format, and the request, latency, activity and signature series move with traffic. Request log
// lines carry reqId and no stamp or body.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { generateP256KeyPair } from '@turnkey/crypto';
import { rawPost, sdkServerClient } from '../helpers/clients.js';
import { startSigil, type SigilInstance } from '../helpers/sigil.js';

let sigil: SigilInstance;
beforeAll(async () => {
  sigil = await startSigil();
}, 120_000);
afterAll(async () => {
  await sigil?.stop();
});

type Sample = { name: string; labels: Record<string, string>; value: number };

function parse(text: string): { samples: Sample[]; types: Map<string, string> } {
  const samples: Sample[] = [];
  const types = new Map<string, string>();
  for (const line of text.split('\n')) {
    if (line === '') continue;
    const t = /^# TYPE (\w+) (counter|histogram|gauge|summary|untyped)$/.exec(line);
    if (t) {
      types.set(t[1], t[2]);
      continue;
    }
    if (/^# HELP \w+ .+$/.test(line)) continue;
    const m = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (-?[0-9.e+-]+|\+Inf|NaN)$/.exec(line);
    if (!m) throw new Error(`not Prometheus text: ${line}`);
    const labels: Record<string, string> = {};
    if (m[2]) {
      for (const p of m[2].match(/\w+="(?:[^"\\]|\\.)*"/g) ?? []) {
        const i = p.indexOf('=');
        labels[p.slice(0, i)] = p.slice(i + 2, -1);
      }
    }
    samples.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return { samples, types };
}

async function scrape() {
  const res = await fetch(`${sigil.url}/metrics`);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return parse(await res.text());
}

const value = (samples: Sample[], name: string, labels: Record<string, string>) =>
  samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((a, s) => a + s.value, 0);

describe('GET /metrics', () => {
  it('counts requests, latency, activities and signatures', async () => {
    const before = await scrape();
    const api = sdkServerClient(sigil);
    await api.getWhoami({});
    await api.getWhoami({});
    const { walletId } = await api.createWallet({
      walletName: 'metrics',
      accounts: [{ curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' }],
    });
    const { accounts } = await api.getWalletAccounts({ walletId });
    await api.signRawPayloads({
      signWith: accounts[0].address,
      payloads: ['0x' + '11'.repeat(32), '0x' + '22'.repeat(32)],
      encoding: 'PAYLOAD_ENCODING_HEXADECIMAL',
      hashFunction: 'HASH_FUNCTION_NO_OP',
    });
    const stranger = generateP256KeyPair();
    const refused = await rawPost(`${sigil.url}/public/v1/query/whoami`, { organizationId: sigil.root.organizationId }, {
      key: { apiPublicKey: stranger.publicKey, apiPrivateKey: stranger.privateKey },
    });
    expect(refused.status).toBe(401);
    await rawPost(`${sigil.url}/public/v1/query/no_such_thing_${Date.now()}`, {});

    const after = await scrape();
    expect(after.types.get('sigil_requests_total')).toBe('counter');
    expect(after.types.get('sigil_request_duration_seconds')).toBe('histogram');
    expect(after.types.get('sigil_activities_total')).toBe('counter');
    expect(after.types.get('sigil_signatures_total')).toBe('counter');
    const delta = (name: string, labels: Record<string, string>) => value(after.samples, name, labels) - value(before.samples, name, labels);
    expect(delta('sigil_requests_total', { operation: 'whoami', kind: 'query', status: '200' })).toBe(2);
    expect(delta('sigil_requests_total', { operation: 'whoami', kind: 'query', status: '401' })).toBe(1);
    expect(delta('sigil_requests_total', { operation: 'unknown', kind: 'query' })).toBe(1);
    expect(after.samples.some((s) => s.labels.operation?.startsWith('no_such_thing'))).toBe(false);
    expect(delta('sigil_request_duration_seconds_count', { operation: 'whoami' })).toBe(3);
    expect(delta('sigil_request_duration_seconds_bucket', { operation: 'whoami', le: '+Inf' })).toBe(3);
    expect(delta('sigil_activities_total', { type: 'ACTIVITY_TYPE_CREATE_WALLET', status: 'ACTIVITY_STATUS_COMPLETED' })).toBe(1);
    expect(delta('sigil_signatures_total', { operation: 'sign_raw_payloads' })).toBe(2);
    // The wallet and the signature were each recorded by a grouped commit (the refusal may be too).
    expect(after.types.get('sigil_commit_groups_total')).toBe('counter');
    expect(after.types.get('sigil_commit_group_units_total')).toBe('counter');
    const groups = delta('sigil_commit_groups_total', {});
    const units = delta('sigil_commit_group_units_total', {});
    expect(units).toBeGreaterThanOrEqual(2);
    expect(groups).toBeGreaterThanOrEqual(1);
    expect(units).toBeGreaterThanOrEqual(groups);
    // Buckets are cumulative.
    const buckets = after.samples.filter((s) => s.name === 'sigil_request_duration_seconds_bucket' && s.labels.operation === 'whoami');
    for (let i = 1; i < buckets.length; i++) expect(buckets[i].value).toBeGreaterThanOrEqual(buckets[i - 1].value);
  }, 60_000);
});
