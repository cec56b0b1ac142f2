// Errors as data: every refusal Sigil sends is a SigilError carrying a Turnkey error code
// (`turnkeyErrorCode`, docs/reference/api.md "Limits"), the gRPC code the Turnkey SDK reads as `code`,
// and the HTTP status. The mapping lives here once; src/http turns a SigilError into the JSON body
// `{code, message, details:[{"@type":"type.googleapis.com/errors.v1.TurnkeyErrorDetail",turnkeyErrorCode}]}`
// (docs/reference/api.md "Errors"). Messages that SDKs match on are kept verbatim.

/** gRPC status codes (google.rpc.Code) as the Turnkey SDK surfaces them in `Turnkey error <code>`. */
export const GrpcCode = {
  OK: 0,
  CANCELLED: 1,
  UNKNOWN: 2,
  INVALID_ARGUMENT: 3,
  DEADLINE_EXCEEDED: 4,
  NOT_FOUND: 5,
  ALREADY_EXISTS: 6,
  PERMISSION_DENIED: 7,
  RESOURCE_EXHAUSTED: 8,
  FAILED_PRECONDITION: 9,
  UNIMPLEMENTED: 12,
  INTERNAL: 13,
  UNAVAILABLE: 14,
  UNAUTHENTICATED: 16,
} as const;

interface ErrorKind {
  grpc: number;
  http: number;
}

/** turnkeyErrorCode → transport codes. Names verbatim from the reference service. */
export const ERROR_KINDS = {
  REQUEST_INVALID: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_TIME: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_ORGANIZATION_ID: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_EMAIL: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_OIDC_TOKEN: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_ACTIVITY_CALLER: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  INVALID_TRANSACTION: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  UNSUPPORTED_TRANSACTION_TYPE: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  WALLET_ACCOUNT_NOT_EXPORTED: { grpc: GrpcCode.INVALID_ARGUMENT, http: 400 },
  ORGANIZATION_NOT_FOUND: { grpc: GrpcCode.NOT_FOUND, http: 404 },
  NOT_FOUND: { grpc: GrpcCode.NOT_FOUND, http: 404 },
  OAUTH2_CREDENTIAL_NOT_FOUND: { grpc: GrpcCode.NOT_FOUND, http: 404 },
  UNIMPLEMENTED: { grpc: GrpcCode.UNIMPLEMENTED, http: 404 },
  SIGNATURE_MISSING: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  SIGNATURE_INVALID: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  PUBLIC_KEY_NOT_FOUND: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  CREDENTIAL_NOT_FOUND: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  CREDENTIAL_CONFLICT: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  API_KEY_EXPIRED: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  UNAUTHENTICATED: { grpc: GrpcCode.UNAUTHENTICATED, http: 401 },
  REQUEST_NOT_AUTHORIZED: { grpc: GrpcCode.PERMISSION_DENIED, http: 403 },
  FORBIDDEN: { grpc: GrpcCode.PERMISSION_DENIED, http: 403 },
  CONFLICT: { grpc: GrpcCode.ALREADY_EXISTS, http: 409 },
  RATE_LIMIT_EXCEEDED: { grpc: GrpcCode.RESOURCE_EXHAUSTED, http: 429 },
  BODY_TOO_LARGE: { grpc: GrpcCode.INVALID_ARGUMENT, http: 413 },
  UNSUPPORTED_MEDIA_TYPE: { grpc: GrpcCode.INVALID_ARGUMENT, http: 415 },
  HEADERS_TOO_LARGE: { grpc: GrpcCode.INVALID_ARGUMENT, http: 431 },
  REQUEST_TIMEOUT: { grpc: GrpcCode.DEADLINE_EXCEEDED, http: 408 },
  INTERNAL: { grpc: GrpcCode.INTERNAL, http: 500 },
  // The process holds no key until its seal is opened (docs/operator-guide.md "Custody"); 503 so balancers retry elsewhere.
  SEALED: { grpc: GrpcCode.UNAVAILABLE, http: 503 },
} as const satisfies Record<string, ErrorKind>;

export type TurnkeyErrorCode = keyof typeof ERROR_KINDS;

/**
 * An error body stays a few KB whatever the request held: messages and detail strings may quote the
 * client's input, so they are cut, and detail lists are short.
 */
export const ERROR_LIMITS = { messageChars: 1024, detailStringChars: 256, detailItems: 8 } as const;

function cut(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max)}… (${text.length - max} more characters)` : text;
}

function capDetail(value: unknown, depth = 0): unknown {
  if (typeof value === 'string') return cut(value, ERROR_LIMITS.detailStringChars);
  if (value === null || typeof value !== 'object') return value;
  if (depth > 4) return '…';
  if (Array.isArray(value)) return value.slice(0, ERROR_LIMITS.detailItems).map((v) => capDetail(v, depth + 1));
  return Object.fromEntries(Object.entries(value).slice(0, ERROR_LIMITS.detailItems).map(([k, v]) => [k, capDetail(v, depth + 1)]));
}

/** A detail entry of the error body (protobufAny in the swagger). */
export type ErrorDetail = { '@type': string; [k: string]: unknown };

export class SigilError extends Error {
  readonly turnkeyErrorCode: TurnkeyErrorCode;
  readonly grpcCode: number;
  readonly httpStatus: number;
  readonly extraDetails: ErrorDetail[];
  /** Policy denial is sent with `details: []` exactly (docs/reference/policies.md "The decision for an activity"). */
  readonly bareDetails: boolean;

  constructor(
    code: TurnkeyErrorCode,
    message: string,
    opts: { details?: ErrorDetail[]; grpc?: number; http?: number; bareDetails?: boolean } = {},
  ) {
    super(message);
    this.name = 'SigilError';
    this.turnkeyErrorCode = code;
    this.grpcCode = opts.grpc ?? ERROR_KINDS[code].grpc;
    this.httpStatus = opts.http ?? ERROR_KINDS[code].http;
    this.extraDetails = opts.details ?? [];
    this.bareDetails = opts.bareDetails ?? false;
  }

  toBody(): { code: number; message: string; details: ErrorDetail[] } {
    const details: ErrorDetail[] = this.bareDetails
      ? []
      : [
          { '@type': 'type.googleapis.com/errors.v1.TurnkeyErrorDetail', turnkeyErrorCode: this.turnkeyErrorCode },
          ...this.extraDetails.slice(0, ERROR_LIMITS.detailItems).map((d) => capDetail(d) as ErrorDetail),
        ];
    return { code: this.grpcCode, message: cut(this.message, ERROR_LIMITS.messageChars), details };
  }
}

/** Shorthands for the errors raised most often; they keep call sites to one line. */
export const invalid = (message: string, details?: ErrorDetail[]) =>
  new SigilError('REQUEST_INVALID', message, { details });
export const notFound = (message: string) => new SigilError('NOT_FOUND', message);
export const notAuthorized = (message = 'request not authorized') => new SigilError('REQUEST_NOT_AUTHORIZED', message);

/**
 * The hosted service's answer to an implicit deny (no policy allows the activity): code 7, this
 * message (clients and the SDK's examples match /permission/i on it) and a PolicyEnginePermissionError
 * detail with each policy's outcome. Sigil's own, precise reason follows in a detail of its own.
 */
export const PERMISSION_DENIED_MESSAGE =
  "You don't have sufficient permissions to take this action. Please add a policy granting this user permissions. Learn more at https://docs.turnkey.com/concepts/policies/quickstart.";

export function permissionDenied(reason: string, policyEvaluations: { policyId: string; outcome: string }[]): SigilError {
  return new SigilError('REQUEST_NOT_AUTHORIZED', PERMISSION_DENIED_MESSAGE, {
    details: [
      { '@type': 'type.googleapis.com/errors.v1.PolicyEnginePermissionError', message: 'No policies evaluated to outcome: Allow', policyEvaluations },
      { '@type': 'type.googleapis.com/sigil.v1.DenialReason', reason },
    ],
  });
}

/** A field-level violation in the google.rpc.BadRequest detail the SDK tests show. */
export function badRequestDetail(violations: { field: string; description: string }[]): ErrorDetail {
  return { '@type': 'type.googleapis.com/google.rpc.BadRequest', fieldViolations: violations };
}

/** Anything that is not a SigilError becomes an opaque internal error with an id the logs carry. */
export function internalError(errorId: string): SigilError {
  return new SigilError('INTERNAL', `internal server error (${errorId})`);
}
