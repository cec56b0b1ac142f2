// Turns anything thrown on the request path into the JSON error body the SDK parses
// (`{code, message, details}`, turnkey-contract.md §2.4) and an HTTP status. Internal failures are
// logged with an id and answered without internals.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { SigilError, internalError } from '../errors/errors.js';

export function toSigilError(err: unknown, log: FastifyBaseLogger): SigilError {
  if (err instanceof SigilError) return err;
  const fe = err as { code?: string; statusCode?: number; message?: string };
  if (fe?.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
    return new SigilError('BODY_TOO_LARGE', `request body too large: the limit is ${(fe as { limit?: number }).limit ?? 'configured'} bytes`);
  }
  if (typeof fe?.code === 'string' && fe.code.startsWith('FST_ERR_CTP')) {
    return new SigilError('REQUEST_INVALID', `bad request body: ${fe.message}`);
  }
  if (fe?.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new SigilError('REQUEST_INVALID', fe.message ?? 'bad request');
  }
  const errorId = randomUUID();
  log.error({ err, errorId }, 'internal error');
  return internalError(errorId);
}
