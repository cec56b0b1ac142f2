// In-place re-sealing (docs/operator-guide.md "Custody"): a deployment older than
// per-organization keys holds secrets sealed under the deployment's data key, which deleting their
// organization does not shred, and secrets in the first, ':'-joined additional-data format. A serving
// process walks every sealed column once, in the background, and seals each such secret again under
// its organization's key in the current format.
// - Bounded: pages of `pageSize` rows by id; the ciphertexts of a page still to re-seal are replaced in
//   one short transaction, with no network call in it, and the event loop is given back between pages.
// - Resumable: nothing records progress; a restarted walk finds only what is still to re-seal.
// - Safe with two processes: a row is replaced only if it still holds the ciphertext that was read, so
//   two processes re-sealing alike write once, and a secret rewritten meanwhile (an update, a delete)
//   is left as it now is.
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import { FIRST_FORMAT_PREFIXES, type Barrier, type SecretSealer } from '../../barrier/barrier.js';
import { ORGANIZATION_SEALED_COLUMNS, type Repositories, type SealedColumn } from '../../store/index.js';
import { openerFor, sealerFor } from './organization-keys.js';

export interface ResealOutcome {
  /** Secrets now sealed under their organization's key in the current format. */
  resealed: number;
  /** Secrets that did not open (their organization's key destroyed, say): left as they are. */
  unopenable: number;
}

export interface ResealDeps {
  barrier: Barrier;
  /** Repositories outside any transaction, for the reads and the organizations' keys. */
  repos: Repositories;
  transaction: <T>(fn: (repos: Repositories) => Promise<T>) => Promise<T>;
  pageSize?: number;
  now?: () => number;
  log?: (level: 'info' | 'warn', fields: Record<string, unknown>, message: string) => void;
}

export class Resealer {
  private stopped = false;
  private running: Promise<ResealOutcome> | undefined;

  constructor(private readonly deps: ResealDeps) {}

  /** Starts the walk in the background; its outcome is logged. */
  start(): void {
    this.stopped = false;
    this.running ??= this.run()
      .then((outcome) => {
        if (outcome.resealed + outcome.unopenable > 0) this.deps.log?.('info', { reseal: outcome }, 'secrets re-sealed under their organizations\' keys');
        return outcome;
      })
      .catch((err) => {
        // A sealed barrier or a lost database: the next start walks again from the beginning.
        this.deps.log?.('warn', { err }, 'in-place re-sealing stopped; it resumes at the next start');
        return { resealed: 0, unopenable: 0 };
      });
  }

  /** Stops after the batch in progress. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** Walks every sealed column once; answers what it did. */
  async run(): Promise<ResealOutcome> {
    const outcome: ResealOutcome = { resealed: 0, unopenable: 0 };
    for (const at of ORGANIZATION_SEALED_COLUMNS) {
      let after = '';
      while (!this.stopped) {
        const page = await this.deps.repos.sealedColumns.page(at, after, this.deps.pageSize ?? 500);
        if (page.length === 0) break;
        after = page[page.length - 1].id;
        const rows = page.filter((r): r is typeof r & { sealed: string } => r.sealed !== null && FIRST_FORMAT_PREFIXES.some((p) => r.sealed!.startsWith(p)));
        if (rows.length > 0) await this.batch(at, rows, outcome);
        await yieldToLoop();
      }
    }
    return outcome;
  }

  private async batch(at: SealedColumn, rows: { id: string; organization_id: string; sealed: string }[], outcome: ResealOutcome): Promise<void> {
    const { barrier, repos } = this.deps;
    const now = this.deps.now?.() ?? Date.now();
    const sealers = new Map<string, SecretSealer | undefined>();
    const replacements: { id: string; from: string; to: string }[] = [];
    for (const row of rows) {
      if (!sealers.has(row.organization_id)) {
        // No key is created for an organization deleted meanwhile: it would outlive it.
        const exists = (await repos.organizations.get(row.organization_id)) !== undefined;
        sealers.set(row.organization_id, exists ? await sealerFor(barrier, repos, row.organization_id, now) : undefined);
      }
      const sealer = sealers.get(row.organization_id);
      if (!sealer) continue;
      const loc = { table: at.table, rowId: row.id, column: at.column };
      let plaintext: Buffer;
      try {
        plaintext = (await openerFor(barrier, repos, row.organization_id, [row.sealed])).open(row.sealed, loc);
      } catch {
        outcome.unopenable++;
        continue;
      }
      try {
        replacements.push({ id: row.id, from: row.sealed, to: sealer.seal(plaintext, loc) });
      } finally {
        plaintext.fill(0);
      }
    }
    if (replacements.length === 0) return;
    await this.deps.transaction(async (tx) => {
      for (const r of replacements) if (await tx.sealedColumns.replace(at, r.id, r.from, r.to)) outcome.resealed++;
    });
  }
}
