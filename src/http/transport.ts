// Transport limits of both HTTP servers, as a production HTTP service sets them (RFC 9110
// §15.5.9 408, §15.5.16 415; RFC 6585 §5 431): the whole request must arrive within the request
// timeout and its headers within the headers timeout, an idle kept-alive connection is closed after
// the keep-alive timeout, each server holds at most maxConnections, and POST bodies must be JSON
// sent as such (no other media type, no content coding). Errors of the transport itself (a timeout,
// oversized headers, a malformed request) are JSON `{code, message, details}` like every other.
// A body refused before it was read (too large, wrong type) is read on and discarded up to a bound
// before the connection is reused or closed, so the client, still sending, reads the answer instead
// of a connection reset.
import type { IncomingMessage } from 'node:http';
import { readFileSync } from 'node:fs';
import type { Socket } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { SigilError } from '../errors/errors.js';

export interface TransportLimits {
  bodyLimitBytes: number;
  requestTimeoutMs: number;
  headersTimeoutMs: number;
  keepAliveTimeoutMs: number;
  maxConnections: number;
}

/** How often node:http looks for requests past their timeouts (its default, 30 s, would let them run long past). */
const TIMEOUT_CHECK_EVERY_MS = 250;

/** A refused body is discarded up to this many times the body limit; past it the connection is cut. */
export const DISCARD_BODY_FACTOR = 4;

/** Fastify options that set the node:http server's timeouts. */
export function serverOptions(limits: TransportLimits) {
  return {
    requestTimeout: limits.requestTimeoutMs,
    keepAliveTimeout: limits.keepAliveTimeoutMs,
    http: {
      headersTimeout: limits.headersTimeoutMs,
      connectionsCheckingInterval: Math.min(TIMEOUT_CHECK_EVERY_MS, limits.headersTimeoutMs),
    },
    clientErrorHandler,
  };
}

/** The connection cap, set on the node:http server (new connections past it are closed at once). */
export function capConnections(server: { maxConnections: number }, limits: TransportLimits): void {
  server.maxConnections = limits.maxConnections;
}

function transportError(err: Error & { code?: string }): SigilError {
  if (err.code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return new SigilError('REQUEST_TIMEOUT', 'request timeout: the request (headers and body) did not arrive in time');
  }
  if (err.code === 'HPE_HEADER_OVERFLOW') return new SigilError('HEADERS_TOO_LARGE', 'request headers too large');
  return new SigilError('REQUEST_INVALID', 'malformed HTTP request');
}

/** node:http's clientError: a JSON answer when the socket can still take one, then the socket is closed. */
function clientErrorHandler(err: Error & { code?: string }, socket: Socket): void {
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const answered = (socket as Socket & { _httpMessage?: { headersSent?: boolean } })._httpMessage?.headersSent === true;
  if (socket.writable && !answered) {
    const e = transportError(err);
    const body = JSON.stringify(e.toBody());
    const reason = { 408: 'Request Timeout', 431: 'Request Header Fields Too Large' }[e.httpStatus] ?? 'Bad Request';
    socket.write(
      `HTTP/1.1 ${e.httpStatus} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy();
}

const JSON_MEDIA_TYPE = /^application\/json\s*(;\s*charset\s*=\s*"?utf-?8"?\s*)?$/i;

function hasBody(req: IncomingMessage): boolean {
  const length = req.headers['content-length'];
  return req.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * Route hook of the JSON endpoints: a body is `application/json` (UTF-8, the only charset JSON
 * has: RFC 8259 §8.1) without a content coding; a request without a body needs no type.
 */
export function requireJsonBody(req: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void): void {
  // A callback hook (an async one costs a promise and a microtask turn on every request).
  const encoding = req.headers['content-encoding'];
  if (encoding !== undefined && encoding.trim().toLowerCase() !== 'identity') {
    return done(new SigilError('UNSUPPORTED_MEDIA_TYPE', `unsupported content encoding "${encoding}": send the JSON body uncompressed`));
  }
  if (!hasBody(req.raw)) return done();
  const type = req.headers['content-type'];
  if (type === undefined || !JSON_MEDIA_TYPE.test(type.trim())) {
    return done(
      new SigilError('UNSUPPORTED_MEDIA_TYPE', `unsupported content type ${type === undefined ? '(none)' : `"${type}"`}: send the body as application/json`),
    );
  }
  done();
}

/**
 * Before answering an error to a request whose body has not been read: read the rest and discard
 * it, up to DISCARD_BODY_FACTOR × the body limit (then the connection is cut), and keep the
 * connection rather than closing it under a client that is still sending.
 */
export function discardUnreadBody(req: FastifyRequest, reply: FastifyReply, bodyLimitBytes: number): void {
  const raw = req.raw;
  if (raw.complete || raw.destroyed) return;
  reply.removeHeader('connection');
  const max = DISCARD_BODY_FACTOR * bodyLimitBytes;
  let seen = 0;
  raw.on('data', (chunk: Buffer) => {
    seen += chunk.length;
    if (seen > max) raw.socket.destroy();
  });
  raw.resume();
}

/** The soft limit of open files of this process (Linux), to warn when the connection caps exceed it. */
export function openFilesLimit(): number | undefined {
  try {
    const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
    return m ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}
