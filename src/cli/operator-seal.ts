// `sigil operator …`: the seal commands of docs/operator-guide.md "Custody".
//   unseal       gives one share (read from stdin) to a process's operator server; with a static or
//                pkcs11 seal, lifts an emergency seal once the configured seal is shown to open;
//   seal         the emergency seal: every process of the deployment seals within SIGIL_SEAL_WATCH_MS;
//   seal-status  what a process's operator server reports.
// Shares are never put on the command line, where other users of the host could read them.
import { readFileSync } from 'node:fs';
import { hostname, userInfo } from 'node:os';
import type { Config } from '../config/config.js';
import { unwrapWith } from '../domain/governance/deployment.js';
import { setEmergencySeal } from '../domain/governance/seal-state.js';
import { shareFromOperator } from '../barrier/shamir.js';
import { Store } from '../store/index.js';
import { withAutomaticSeal } from './seal.js';

function operatorUrl(config: Config, url: string | undefined): string {
  return (url ?? `http://${config.operatorHost.includes(':') ? `[${config.operatorHost}]` : config.operatorHost}:${config.operatorPort ?? 8083}`).replace(/\/+$/, '');
}

async function call(url: string, path: string, body?: unknown): Promise<Record<string, unknown>> {
  let res: Response;
  try {
    res = await fetch(`${url}${path}`, body === undefined ? {} : { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  } catch (err) {
    throw new Error(`cannot reach the operator server at ${url}: ${(err as Error).message}`);
  }
  const json = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(String(json.message ?? `HTTP ${res.status}`));
  return json;
}

function describe(s: Record<string, unknown>): string {
  if (!s.sealed) return `unsealed (${s.type} seal)\n`;
  return s.type === 'shamir' ? `sealed: ${s.progress} of ${s.threshold} shares given\n` : `sealed (${s.type} seal)\n`;
}

const operatorName = () => `${userInfo().username}@${hostname()}`;

export async function operatorCommand(
  config: Config,
  sub: string | undefined,
  opts: { url?: string; reset?: boolean; json?: boolean; keyFile?: string; print: (t: string) => void },
): Promise<void> {
  const out = (s: Record<string, unknown>) => opts.print(opts.json ? `${JSON.stringify(s)}\n` : describe(s));
  switch (sub) {
    case 'seal-status':
      return out(await call(operatorUrl(config, opts.url), '/v1/sys/seal-status'));
    case 'unseal': {
      if (config.seal.type !== 'shamir') return liftEmergencySeal(config, opts.print);
      const url = operatorUrl(config, opts.url);
      if (opts.reset) return out(await call(url, '/v1/sys/unseal', { reset: true }));
      const given = readFileSync(0, 'utf8').trim();
      if (given === '') throw new Error('give the share on standard input (it is never read from the command line)');
      // An encrypted share is opened here, on the operator's side, with their key file.
      const privateKey = opts.keyFile ? (JSON.parse(readFileSync(opts.keyFile, 'utf8')) as { privateKey?: string }).privateKey : undefined;
      const share = shareFromOperator(given, privateKey);
      return out(await call(url, '/v1/sys/unseal', { key: share }));
    }
    case 'seal': {
      const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
      try {
        const state = await setEmergencySeal(store, true, operatorName(), Date.now());
        opts.print(`emergency seal ${state.generation} set: every process of the deployment seals within ${config.sealWatchMs} ms and answers 503 until unsealed\n`);
      } finally {
        await store.close();
      }
      return;
    }
    default:
      throw new Error(`unknown operator command "${sub ?? ''}": expected unseal, seal or seal-status`);
  }
}

/** Static and pkcs11: an emergency seal is lifted by whoever can open the seal (key file, HSM PIN). */
async function liftEmergencySeal(config: Config, print: (t: string) => void): Promise<void> {
  const store = await Store.open({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  try {
    (await withAutomaticSeal(config, (seal) => unwrapWith(store.repos, seal))).fill(0);
    const state = await setEmergencySeal(store, false, operatorName(), Date.now());
    print(`emergency seal lifted (generation ${state.generation}): processes unseal through the ${config.seal.type} seal within ${config.sealWatchMs} ms\n`);
  } finally {
    await store.close();
  }
}
