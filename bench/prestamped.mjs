// The pre-stamped scenarios of `npm run bench` (docs/operator-guide.md "Benchmarks"): sign_raw_payload,
// get_whoami and create_wallet at concurrency 16 through bench/loadgen.mjs, on SQLite and on PostgreSQL
// with one and two processes, each row with requests/s, p50/p99, the server's CPU µs per request, its
// write system calls and KB towards storage per request, the PostgreSQL backends' CPU µs per request and
// the SQL round trips per request, beside the budget of
// one signature on one core (docs/design.md "The hot path": HTTP 47 + stamp verify 77 + secp256k1 sign
// 48 + a share of a grouped durable write 49 ≈ 223 µs).
import { WARMUP_MS, prestamp, runLoad, servingProcesses } from './loadgen.mjs';

export const BUDGET_US = 223;
const ETH = { curve: 'CURVE_SECP256K1', pathFormat: 'PATH_FORMAT_BIP32', path: "m/44'/60'/0'/0/0", addressFormat: 'ADDRESS_FORMAT_ETHEREUM' };

/** Bodies for each scenario; every activity body differs (its own fingerprint). */
const SCENARIOS = {
  sign_raw_payload: {
    path: '/public/v1/submit/sign_raw_payload',
    body: (ctx, i) =>
      JSON.stringify({
        type: 'ACTIVITY_TYPE_SIGN_RAW_PAYLOAD_V2',
        timestampMs: String(ctx.now + i),
        organizationId: ctx.organizationId,
        parameters: { signWith: ctx.signWith, payload: (ctx.tag + i.toString(16)).padStart(64, '0').slice(-64), encoding: 'PAYLOAD_ENCODING_HEXADECIMAL', hashFunction: 'HASH_FUNCTION_NO_OP' },
      }),
  },
  get_whoami: {
    path: '/public/v1/query/get_whoami',
    // A query: its stamps are sent again in turn (a process answers it at 11,000/s and more, which
    // would need hundreds of thousands stamped ahead for a warm-up and a run).
    repeat: true,
    body: (ctx) => JSON.stringify({ organizationId: ctx.organizationId }),
  },
  create_wallet: {
    path: '/public/v1/submit/create_wallet',
    body: (ctx, i) =>
      JSON.stringify({
        type: 'ACTIVITY_TYPE_CREATE_WALLET',
        timestampMs: String(ctx.now + i),
        organizationId: ctx.organizationId,
        parameters: { walletName: `load-${ctx.tag}-${i}`, accounts: [ETH] },
      }),
  },
};

/**
 * How many requests to stamp for a run: enough for the fastest rate a row can plausibly reach
 * (activities each need their own; a row that runs out says so). A query's are sent again in turn.
 */
const CEILING = { sign_raw_payload: 6000, get_whoami: 100, create_wallet: 1500 };

/**
 * Runs `names` against one deployment: `sigil` is `{url, pid, root, signWith}`; `pgClient` (a pg
 * Client on the same server) adds the PostgreSQL rows' database figures. `ratePerSecond` (by name)
 * paces the load instead of sending as fast as answers come.
 */
export async function prestampedRows({ label, sigil, names, durationMs, concurrency = 16, pgClient, ratePerSecond = {} }) {
  const rows = [];
  for (const name of names) {
    const s = SCENARIOS[name];
    const ctx = { organizationId: sigil.root.organizationId, signWith: sigil.signWith, now: Date.now(), tag: Math.random().toString(16).slice(2, 10) };
    // Enough for the warm-up and the run at the fastest rate the row can plausibly reach.
    const count = s.repeat ? CEILING[name] : Math.ceil((CEILING[name] * (durationMs + WARMUP_MS * servingProcesses(sigil.pid).length)) / 1000) + concurrency;
    const requests = prestamp(sigil.root, s.path, count, (i) => s.body(ctx, i));
    const rate = ratePerSecond[name];
    const r = await runLoad({ url: sigil.url, requests, concurrency, durationMs, sigilPid: sigil.pid, pgClient, ratePerSecond: rate, repeat: s.repeat });
    if (r.errors) console.error(`${label} ${name}: ${r.errors} errors, first: ${r.firstError}`);
    // Ran out of stamped requests: the row measured less than its duration (or nothing at all).
    if (r.exhausted) console.error(`${label} ${name}: the ${count} stamped requests ran out; raise its CEILING in bench/prestamped.mjs`);
    rows.push({
      scenario: `${name} pre-stamped keep-alive, ${label}${rate ? `, paced at ${rate}/s` : ''}${r.exhausted ? ' (ran out of requests)' : ''}`,
      concurrency,
      requests: r.requests,
      errors: r.errors,
      perSecond: r.perSecond,
      p50ms: r.p50ms,
      p99ms: r.p99ms,
      serverCpuUs: r.serverCpuUs,
      writeCalls: r.writeCalls,
      storageKB: r.storageKB,
      postgresCpuUs: r.postgresCpuUs ?? '',
      roundTrips: r.roundTrips ?? '',
      unitsPerGroup: r.unitsPerGroup ?? '',
      maxStallMs: r.maxStallMs,
      budgetUs: name === 'sign_raw_payload' ? BUDGET_US : '',
    });
  }
  return rows;
}
