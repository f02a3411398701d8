/**
 * `Status` objects shaped like kube-apiserver's (key order included), and the
 * error type that carries them.
 */

export interface StatusCause {
  reason?: string;
  message?: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface Status {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: { continue?: string };
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code?: number;
}

/** An API error: an HTTP status code with the `Status` body the server sends. */
export class ApiError extends Error {
  readonly code: number;
  readonly status: Status;
  /** Extra response headers, e.g. `Retry-After`. */
  readonly headers: Record<string, string>;
  constructor(status: Status, headers: Record<string, string> = {}) {
    super(status.message ?? status.reason ?? `HTTP ${status.code}`);
    this.name = 'ApiError';
    this.code = status.code ?? 500;
    this.status = status;
    this.headers = headers;
  }
}

/** Builds a Failure Status with the keys in the server's order. */
export function failure(
  code: number,
  message: string | undefined,
  reason: string | undefined,
  details?: StatusDetails,
  metadata: { continue?: string } = {},
): Status {
  const s: Status = { kind: 'Status', apiVersion: 'v1', metadata, status: 'Failure' };
  if (message !== undefined) s.message = message;
  if (reason !== undefined) s.reason = reason;
  if (details !== undefined) s.details = orderDetails(details);
  s.code = code;
  return s;
}

function orderDetails(d: StatusDetails): StatusDetails {
  const out: StatusDetails = {};
  if (d.name !== undefined) out.name = d.name;
  if (d.group) out.group = d.group;
  if (d.kind !== undefined) out.kind = d.kind;
  if (d.uid !== undefined) out.uid = d.uid;
  if (d.causes !== undefined) out.causes = d.causes.map((c) => orderCause(c));
  if (d.retryAfterSeconds !== undefined) out.retryAfterSeconds = d.retryAfterSeconds;
  return out;
}

function orderCause(c: StatusCause): StatusCause {
  const out: StatusCause = {};
  if (c.reason !== undefined) out.reason = c.reason;
  if (c.message !== undefined) out.message = c.message;
  if (c.field !== undefined) out.field = c.field;
  return out;
}

/** What names the resource in messages: `configmaps` or `myapples.stable.example.com`. */
export interface ResourceRef {
  group: string;
  resource: string;
  kind: string;
}

function qualifiedResource(r: ResourceRef): string {
  return r.group ? `${r.resource}.${r.group}` : r.resource;
}

export function successStatus(r: ResourceRef, name: string, uid: string | undefined): Status {
  return {
    kind: 'Status',
    apiVersion: 'v1',
    metadata: {},
    status: 'Success',
    details: orderDetails({ name, group: r.group, kind: r.resource, uid }),
  };
}

export function notFound(r: ResourceRef, name: string): ApiError {
  return new ApiError(failure(404, `${qualifiedResource(r)} "${name}" not found`, 'NotFound', { name, group: r.group, kind: r.resource }));
}

export function pathNotFound(): ApiError {
  return new ApiError(failure(404, 'the server could not find the requested resource', 'NotFound', {}));
}

export function alreadyExists(r: ResourceRef, name: string): ApiError {
  return new ApiError(
    failure(409, `${qualifiedResource(r)} "${name}" already exists`, 'AlreadyExists', {
      name,
      group: r.group,
      kind: r.resource,
    }),
  );
}

export function conflict(r: ResourceRef, name: string, why?: string): ApiError {
  const reason = why ?? 'the object has been modified; please apply your changes to the latest version and try again';
  return new ApiError(
    failure(409, `Operation cannot be fulfilled on ${qualifiedResource(r)} "${name}": ${reason}`, 'Conflict', {
      name,
      group: r.group,
      kind: r.resource,
    }),
  );
}

/** 422 Invalid. `kind` is the Kind (e.g. `ConfigMap`), `group` its API group. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const qualifiedKind = group ? `${kind}.${group}` : kind;
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : (c.message ?? '')));
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(failure(422, `${qualifiedKind} "${name}" is invalid: ${list}`, 'Invalid', { name, group, kind, causes }));
}

export function badRequest(message: string): ApiError {
  return new ApiError(failure(400, message, 'BadRequest'));
}

export function invalidPatch(message: string): ApiError {
  return new ApiError(failure(422, message, 'Invalid'));
}

export function unprocessable(message: string, cause?: string): ApiError {
  return new ApiError(failure(422, message, 'Invalid', cause ? { causes: [{ message: cause }] } : undefined));
}

export function unauthorized(): ApiError {
  return new ApiError(failure(401, 'Unauthorized', 'Unauthorized'));
}

export function methodNotAllowed(): ApiError {
  return new ApiError(failure(405, 'the server does not allow this method on the requested resource', 'MethodNotAllowed', {}));
}

export function unsupportedMediaType(contentType: string): ApiError {
  return new ApiError(
    failure(
      415,
      `the body of the request was in an unknown format - accepted media types include: ` +
        `application/json-patch+json, application/merge-patch+json, application/strategic-merge-patch+json ` +
        `(got ${JSON.stringify(contentType)})`,
      'UnsupportedMediaType',
    ),
  );
}

export const LIST_RV_TOO_OLD = 'The resourceVersion for the provided list is too old.';
export const CONTINUE_TOO_OLD =
  'The provided continue parameter is too old to display a consistent list result. You can start a new ' +
  'list without the continue parameter, or use the continue token in this response to retrieve the ' +
  'remainder of the results. Continuing with the provided token results in an inconsistent list - ' +
  'objects that were created, modified, or deleted between the time the first chunk was returned and ' +
  'now may show up in the list.';

export function expired(message: string, continueToken?: string): ApiError {
  return new ApiError(failure(410, message, 'Expired', undefined, continueToken !== undefined ? { continue: continueToken } : {}));
}

/** The Status carried by a watch's ERROR event when its resourceVersion is too old (04a). */
export function watchTooOld(requested: string | number, oldest: number): Status {
  return failure(410, `too old resource version: ${requested} (${oldest})`, 'Expired');
}

export function tooManyRequests(retryAfterSeconds: number, message?: string): ApiError {
  return new ApiError(failure(429, message ?? 'Too many requests, please try again later.', 'TooManyRequests', { retryAfterSeconds }), {
    'Retry-After': String(retryAfterSeconds),
  });
}

export function internalError(message: string): ApiError {
  return new ApiError(failure(500, `Internal error occurred: ${message}`, 'InternalError', { causes: [{ message }] }));
}

export function serviceUnavailable(message?: string): ApiError {
  return new ApiError(failure(503, message ?? 'the server is currently unable to handle the request', 'ServiceUnavailable'));
}

export function tooLargeResourceVersion(requested: number, current: number): ApiError {
  return new ApiError(
    failure(504, `Timeout: Too large resource version: ${requested}, current: ${current}`, 'Timeout', {
      causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
      retryAfterSeconds: 1,
    }),
  );
}

/** resourceVersion that is not an unsigned integer: 500 with no reason (06f). */
export function malformedResourceVersion(rv: string): ApiError {
  return new ApiError(
    failure(
      500,
      `resourceVersion: Invalid value: ${JSON.stringify(rv)}: strconv.ParseUint: parsing ${JSON.stringify(rv)}: invalid syntax`,
      undefined,
    ),
  );
}

/** A Status for an arbitrary code, used by fault injection. */
export function statusForCode(code: number, message?: string, reason?: string): ApiError {
  switch (code) {
    case 400:
      return badRequest(message ?? 'bad request');
    case 401:
      return unauthorized();
    case 404:
      return pathNotFound();
    case 410:
      return expired(message ?? LIST_RV_TOO_OLD);
    case 500:
      return message ? new ApiError(failure(500, message, reason ?? 'InternalError')) : internalError('injected fault');
    case 503:
      return serviceUnavailable(message);
    case 504:
      return new ApiError(failure(504, message ?? 'Timeout: request did not complete within the allotted timeout', 'Timeout'));
    default:
      return new ApiError(failure(code, message ?? `injected ${code}`, reason ?? 'InternalError'));
  }
}

/** 422 Invalid on ListOptions (05a, 05b). */
export function invalidListOptions(causes: { field: string; message: string }[]): ApiError {
  const full = causes.map((c) => ({ reason: 'FieldValueForbidden', message: c.message, field: c.field }));
  const parts = full.map((c) => `${c.field}: ${c.message}`);
  const list = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  return new ApiError(
    failure(422, `ListOptions.meta.k8s.io "" is invalid: ${list}`, 'Invalid', {
      group: 'meta.k8s.io',
      kind: 'ListOptions',
      causes: full,
    }),
  );
}
