// The operator server (docs/operator-guide.md "Custody"): seal status and unsealing, on its own port, loopback by
// default, apart from the public API. Unsealing needs no credential but the shares themselves, as in
// Vault's sys/unseal: each share is one operator's secret, and fewer than the threshold reveal nothing.
import Fastify from 'fastify';
import type { Logger } from 'pino';
import { SigilError } from '../errors/errors.js';

export interface SealStatus {
  sealed: boolean;
  type: string;
  /** Shares needed and given so far (shamir), 0 otherwise. */
  threshold: number;
  progress: number;
}

export interface OperatorControls {
  status(): SealStatus;
  /** Takes one share, or resets the progress; refusals are SigilErrors. */
  unseal(request: { key?: string; reset?: boolean }): Promise<SealStatus>;
}

export async function operatorServer(opts: { logger: Logger; controls: OperatorControls }) {
  const app = Fastify({ loggerInstance: opts.logger, disableRequestLogging: true, bodyLimit: 16 * 1024 });
  app.setErrorHandler((err, _req, reply) => {
    const e = err instanceof SigilError ? err : new SigilError('REQUEST_INVALID', 'the request is not valid JSON');
    reply.status(e.httpStatus).send(e.toBody());
  });
  app.setNotFoundHandler((req, reply) => {
    reply.status(404).send(new SigilError('NOT_FOUND', `no such endpoint: ${req.method} ${req.url.split('?')[0]}`).toBody());
  });
  app.get('/v1/sys/seal-status', async () => opts.controls.status());
  app.post<{ Body: unknown }>('/v1/sys/unseal', async (req) => {
    const body = req.body as { key?: unknown; reset?: unknown } | null;
    if (body === null || typeof body !== 'object') throw new SigilError('REQUEST_INVALID', 'expected {"key": "<share>"} or {"reset": true}');
    if (body.reset === true) return opts.controls.unseal({ reset: true });
    if (typeof body.key !== 'string') throw new SigilError('REQUEST_INVALID', 'expected {"key": "<share>"} or {"reset": true}');
    return opts.controls.unseal({ key: body.key });
  });
  return app;
}
