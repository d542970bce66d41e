// SigV4 verification for the object proxy (src/storage/proxy.ts): the AWS SDK's own signer
// (@smithy/signature-v4) computes the signature of the request as it arrived, and it is compared
// with the one sent, in constant time. Nothing here computes a signature by hand.
import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { SignatureV4 } from '@smithy/signature-v4';
import type { HttpRequest, SourceData } from '@smithy/types';
import type { ErrorCode } from '../errors.ts';

/** Where the proxy is mounted under PUBLIC_URL: presigned URLs point at `{PUBLIC_URL}/objects/{bucket}/{key}`. */
export const OBJECTS_PREFIX = '/objects';

/** How far a header-signed request's time may be from the server's clock (S3's own tolerance). */
const MAX_SKEW_MS = 15 * 60 * 1000;
/** The longest a SigV4 presigned URL may live (one week). */
const MAX_EXPIRES_SECONDS = 7 * 24 * 60 * 60;

/** The query parameters of a presigned URL's signature; never passed on to the store. */
const AUTH_PARAMS = new Set([
  'x-amz-algorithm',
  'x-amz-credential',
  'x-amz-date',
  'x-amz-expires',
  'x-amz-signedheaders',
  'x-amz-signature',
  'x-amz-security-token',
  'x-amz-content-sha256',
]);

export interface SigningSecret {
  accessKeyId: string;
  secretAccessKey: string;
  region: string;
}

export interface IncomingObjectRequest {
  method: string;
  /** the request target as it arrived, still percent-encoded: `/objects/bucket/key?X-Amz-...` */
  url: string;
  headers: IncomingHttpHeaders;
}

export type Verdict =
  | {
      ok: true;
      /** the path under the store: `/bucket/key`, exactly as signed */
      path: string;
      /** the signed query parameters without the signature's own */
      query: [string, string][];
      /** the signed headers' values (lower-case names), without host and the signature's own */
      headers: Record<string, string>;
      /** how it was signed: presigned URLs may upload, header-signed requests may not */
      presigned: boolean;
    }
  | { ok: false; errorCode: Extract<ErrorCode, `OBJECT_${string}`>; message: string };

const refuse = (errorCode: Extract<ErrorCode, `OBJECT_${string}`>, message: string): Verdict => ({
  ok: false,
  errorCode,
  message,
});
const invalid = (message: string) => refuse('OBJECT_SIGNATURE_INVALID', message);

function bytes(data: SourceData): Buffer | string {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data)
    ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
    : Buffer.from(data);
}

/** node:crypto in the shape the SDK's signer takes (what @smithy/hash-node does). */
class NodeSha256 {
  private readonly hash;
  constructor(secret?: SourceData) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: Uint8Array): void {
    this.hash.update(data);
  }
  digest(): Promise<Uint8Array> {
    return Promise.resolve(this.hash.digest());
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** `20261128T003814Z` (SigV4's long date), or undefined. */
function longDate(text: string | undefined): Date | undefined {
  const m = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(text ?? '');
  if (!m) return undefined;
  const date = new Date(Date.UTC(+m[1]!, +m[2]! - 1, +m[3]!, +m[4]!, +m[5]!, +m[6]!));
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value.join(',') : value;
}

/** A signed-headers list: lower-case names, sorted, host among them. */
function signedHeaderNames(list: string | undefined): string[] | undefined {
  const names = (list ?? '').split(';');
  const wellFormed =
    names.every((n) => /^[a-z0-9-]+$/.test(n)) && names.join(';') === [...names].sort().join(';');
  return wellFormed && names.includes('host') ? names : undefined;
}

interface Parsed {
  /** the path as signed under PUBLIC_URL (its own path, if any, in front) */
  canonicalPath: string;
  storePath: string;
  params: Map<string, string>;
}

function parseTarget(url: string, publicUrl: URL): Parsed | string {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (!path.startsWith(`${OBJECTS_PREFIX}/`)) return `not under ${OBJECTS_PREFIX}/`;
  const params = new Map<string, string>();
  for (const [name, value] of new URLSearchParams(q === -1 ? '' : url.slice(q + 1))) {
    // one value per name: a second one would be read one way here and another way by the store
    if (params.has(name)) return `the query parameter ${name} is given twice`;
    params.set(name, value);
  }
  return {
    canonicalPath: publicUrl.pathname.replace(/\/+$/, '') + path,
    storePath: path.slice(OBJECTS_PREFIX.length),
    params,
  };
}

/**
 * The request's signed headers, host being PUBLIC_URL's (what the URL was signed for, whatever a
 * reverse proxy in front made of Host); the reason when one is missing.
 */
function signedHeaders(
  names: string[],
  headers: IncomingHttpHeaders,
  publicUrl: URL,
): Record<string, string> | string {
  const out: Record<string, string> = {};
  for (const name of names) {
    const value = name === 'host' ? publicUrl.host : headerValue(headers, name);
    if (value === undefined) return `the signed header ${name} is missing`;
    out[name] = value;
  }
  return out;
}

function signer(secret: SigningSecret): SignatureV4 {
  return new SignatureV4({
    service: 's3',
    region: secret.region,
    credentials: { accessKeyId: secret.accessKeyId, secretAccessKey: secret.secretAccessKey },
    sha256: NodeSha256,
    // S3 signs the path as sent, not normalized (as the SDK's S3 presigner does)
    uriEscapePath: false,
    applyChecksum: false,
  });
}

function accepted(parsed: Parsed, headers: Record<string, string>, presigned: boolean): Verdict {
  const query = [...parsed.params].filter(([name]) => !AUTH_PARAMS.has(name.toLowerCase()));
  const kept = Object.fromEntries(
    Object.entries(headers).filter(([name]) => name !== 'host' && !AUTH_PARAMS.has(name)),
  );
  return { ok: true, path: parsed.storePath, query, headers: kept, presigned };
}

async function verifyPresigned(
  req: IncomingObjectRequest,
  parsed: Parsed,
  secret: SigningSecret,
  publicUrl: URL,
  now: Date,
): Promise<Verdict> {
  const p = parsed.params;
  if (p.get('X-Amz-Algorithm') !== 'AWS4-HMAC-SHA256')
    return invalid('X-Amz-Algorithm must be AWS4-HMAC-SHA256');
  if (p.has('X-Amz-Security-Token')) return invalid('no session token is issued here');
  const credential = p.get('X-Amz-Credential');
  const given = p.get('X-Amz-Signature');
  const date = longDate(p.get('X-Amz-Date'));
  const expiresText = p.get('X-Amz-Expires') ?? '';
  const names = signedHeaderNames(p.get('X-Amz-SignedHeaders'));
  if (!credential || !given || !date || !names || !/^\d{1,6}$/.test(expiresText))
    return invalid('the presigned URL is incomplete or malformed');
  const expiresIn = Number(expiresText);
  if (expiresIn > MAX_EXPIRES_SECONDS) return invalid('X-Amz-Expires is longer than a week');
  if (now.getTime() > date.getTime() + expiresIn * 1000)
    return refuse(
      'OBJECT_SIGNATURE_EXPIRED',
      `the presigned URL expired at ${new Date(date.getTime() + expiresIn * 1000).toISOString()}`,
    );
  if (date.getTime() > now.getTime() + MAX_SKEW_MS)
    return refuse('OBJECT_SIGNATURE_EXPIRED', 'the presigned URL is dated in the future');
  // presigned S3 requests sign no payload: the SDK's presigner says so in X-Amz-Content-Sha256
  if (p.get('X-Amz-Content-Sha256') !== 'UNSIGNED-PAYLOAD')
    return invalid('X-Amz-Content-Sha256 must be UNSIGNED-PAYLOAD');
  const headers = signedHeaders(names, req.headers, publicUrl);
  if (typeof headers === 'string') return invalid(headers);

  // The request as the signer saw it before its x-amz-* headers went into the query: the signer
  // moves them there again (presign), and sets the signature's own parameters itself.
  const query: Record<string, string> = {};
  const toSign: Record<string, string> = { ...headers };
  for (const [name, value] of p) {
    const lower = name.toLowerCase();
    if (lower === 'x-amz-signature') continue;
    const hoisted =
      lower.startsWith('x-amz-') && (lower === 'x-amz-content-sha256' || !AUTH_PARAMS.has(lower));
    if (hoisted) toSign[name] = value;
    else query[name] = value;
  }
  const request: HttpRequest = {
    method: req.method,
    protocol: publicUrl.protocol,
    hostname: publicUrl.hostname,
    path: parsed.canonicalPath,
    query,
    headers: toSign,
  };
  const signed = await signer(secret).presign(request, {
    signingDate: date,
    expiresIn,
    signableHeaders: new Set(names),
    unhoistableHeaders: new Set(names.filter((n) => n.startsWith('x-amz-'))),
  });
  const ours = signed.query as Record<string, string>;
  if (ours['X-Amz-Credential'] !== credential)
    return invalid('the URL was not signed with this service’s credentials');
  if (ours['X-Amz-SignedHeaders'] !== names.join(';') || ours['X-Amz-Date'] !== p.get('X-Amz-Date'))
    return invalid('the signed headers or date are malformed');
  if (!sameText(ours['X-Amz-Signature'] ?? '', given))
    return invalid(
      'the signature does not match: the URL, the method or a signed header (Content-Type, Content-Length) differs from what was signed',
    );
  return accepted(parsed, headers, true);
}

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^,\s]+), ?SignedHeaders=([^,\s]+), ?Signature=([0-9a-f]{64})$/;

async function verifyHeaderSigned(
  req: IncomingObjectRequest,
  parsed: Parsed,
  secret: SigningSecret,
  publicUrl: URL,
  now: Date,
): Promise<Verdict> {
  const m = AUTHORIZATION.exec(headerValue(req.headers, 'authorization') ?? '');
  const names = signedHeaderNames(m?.[2]);
  if (!m || !names) return invalid('the Authorization header is not a SigV4 one');
  if (!names.includes('x-amz-date') || !names.includes('x-amz-content-sha256'))
    return invalid('x-amz-date and x-amz-content-sha256 must be signed');
  const date = longDate(headerValue(req.headers, 'x-amz-date'));
  if (!date) return invalid('x-amz-date is malformed');
  if (Math.abs(now.getTime() - date.getTime()) > MAX_SKEW_MS)
    return refuse(
      'OBJECT_SIGNATURE_EXPIRED',
      'the request time is more than 15 minutes away from the server’s',
    );
  const headers = signedHeaders(names, req.headers, publicUrl);
  if (typeof headers === 'string') return invalid(headers);
  const query = Object.fromEntries(parsed.params);
  const request: HttpRequest = {
    method: req.method,
    protocol: publicUrl.protocol,
    hostname: publicUrl.hostname,
    path: parsed.canonicalPath,
    query,
    headers: { ...headers },
  };
  const signed = await signer(secret).sign(request, {
    signingDate: date,
    signableHeaders: new Set(names),
  });
  const ours = AUTHORIZATION.exec(String((signed as HttpRequest).headers.authorization));
  if (!ours || ours[1] !== m[1])
    return invalid('the request was not signed with this service’s credentials');
  if (ours[2] !== m[2]) return invalid('the signed headers are malformed');
  if (!sameText(ours[3]!, m[3]!))
    return invalid(
      'the signature does not match: the URL, the method or a signed header differs from what was signed',
    );
  return accepted(parsed, headers, false);
}

/**
 * Whether the request carries a valid SigV4 signature made with `secret` for PUBLIC_URL: a
 * presigned URL (X-Amz-* query parameters) or an Authorization header. Unsigned, expired and
 * altered requests are refused with the reason.
 */
export async function verifySignature(
  req: IncomingObjectRequest,
  secret: SigningSecret,
  publicUrl: URL,
  now = new Date(),
): Promise<Verdict> {
  const parsed = parseTarget(req.url, publicUrl);
  if (typeof parsed === 'string') return invalid(parsed);
  const presigned = parsed.params.has('X-Amz-Algorithm') || parsed.params.has('X-Amz-Signature');
  const headerSigned = req.headers.authorization !== undefined;
  if (!presigned && !headerSigned)
    return refuse(
      'OBJECT_SIGNATURE_MISSING',
      'the request is not signed: use the presigned URL the API returned',
    );
  if (presigned && headerSigned)
    return invalid('a request is signed one way: a presigned URL or an Authorization header');
  return presigned
    ? verifyPresigned(req, parsed, secret, publicUrl, now)
    : verifyHeaderSigned(req, parsed, secret, publicUrl, now);
}
