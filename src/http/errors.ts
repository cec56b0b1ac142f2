// Turns anything thrown on the request path into the JSON error body the SDK parses
// (`{code, message, details}`, docs/reference/api.md "Errors") and an HTTP status. Internal failures are
// logged with an id and answered without internals.
import { randomUUID } from 'node:crypto';
import type { FastifyBaseLogger } from 'fastify';
import { SigilError, internalError } from '../errors/errors.js';

/**
 * Errors of the pure crypto layer are all caused by the caller's input (their classes say so:
 * src/crypto/errors.ts, src/crypto/p256.ts, src/chains/errors.ts); they are matched by name so
 * this layer needs no import of src/crypto.
 */
function fromCryptoError(err: Error & { code?: string }): SigilError | undefined {
  if (err.name === 'CryptoInputError' || err.name === 'CryptoError') {
    return new SigilError('REQUEST_INVALID', err.message);
  }
  if (err.name === 'TransactionError') {
    if (err.code === 'UNSUPPORTED_TRANSACTION') return new SigilError('UNSUPPORTED_TRANSACTION_TYPE', err.message);
    if (err.code === 'INVALID_TRANSACTION') return new SigilError('INVALID_TRANSACTION', err.message);
    if (err.code === 'NO_MATCHING_SIGNER') return new SigilError('REQUEST_INVALID', err.message);
  }
  return undefined;
}

/**
 * The database cannot be reached or cannot take writes for now: PostgreSQL restarting, failing over or
 * shutting down (SQLSTATE class 08 connection exceptions; 57P01-57P03 shutdown, crash, not yet
 * accepting connections; 25006 a read-only standby, what a connection left on a demoted primary
 * meets), or the connection refused, reset or closed under the request. The request changed nothing
 * (its transaction did not commit), so the caller is told to retry: 503, gRPC UNAVAILABLE, never an
 * internal error. Matched by shape, like the crypto errors above, so this layer imports no driver.
 */
function fromDatabaseUnavailable(err: Error & { code?: string }): SigilError | undefined {
  const code = typeof err.code === 'string' ? err.code : '';
  const unavailable =
    code.startsWith('08') ||
    ['57P01', '57P02', '57P03', '25006', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH'].includes(code) ||
    /^Connection terminated|^timeout expired|^Client has encountered a connection error/.test(err.message);
  if (!unavailable) return undefined;
  return new SigilError('INTERNAL', 'the database is unavailable for now: retry the request', { http: 503, grpc: 14 });
}

export function toSigilError(err: unknown, log: FastifyBaseLogger): SigilError {
  if (err instanceof SigilError) return err;
  if (err instanceof Error) {
    const mapped = fromCryptoError(err);
    if (mapped) return mapped;
    const unavailable = fromDatabaseUnavailable(err);
    if (unavailable) {
      log.warn({ reason: err.message }, 'database unavailable');
      return unavailable;
    }
  }
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
