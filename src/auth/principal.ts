import { AppError, type ErrorCode } from '../errors.ts';
import type { OrgRole, PlatformRole } from '../access/roles.ts';

/** Who is calling: an API key, an OAuth bearer token (src/oauth/tokens.ts) or an embed session. */
export interface Principal {
  kind: 'api_key' | 'bearer' | 'cube_session';
  userId: string;
  email: string;
  platformRole: PlatformRole | null;
  /** set for API-key calls: the key's explicit scope */
  apiKey: { id: string; organizationIds: string[]; patterns: string[] } | null;
  /** set for OAuth bearer-token calls: the client acting for the user, and the grant it holds */
  oauth?: { clientId: string; grantId: string };
  /** set for embed-session calls (src/analytics/sessions.ts): cube reads of one organization only */
  cubeSession?: { id: string; organizationId: string; patterns: string[] | null };
  /**
   * The caller's standing in the x-organization-id organization, read in the same round trip as
   * the key; organizationAccess() uses it once instead of reading it again (src/access/organization.ts).
   */
  prefetchedOrg?: PrefetchedOrg;
  /**
   * PostgreSQL's snapshot (pg_current_snapshot) read in the key's round trip: when it equals the
   * snapshot of the analytics engine's last freshness reading, nothing has committed since and that
   * reading still holds (src/analytics/engine.ts). Taken once per request, like prefetchedOrg.
   */
  snapshot?: { text: string; used: boolean };
}

/** The snapshot read with the caller's credentials, once: a later call of the same batch reads again. */
export function takeSnapshot(principal: Principal | null): string | undefined {
  const s = principal?.snapshot;
  if (!s || s.used) return undefined;
  s.used = true;
  return s.text;
}

/** An organization row with the caller's membership and data-access role (all null when absent). */
export interface OrgStanding {
  id: string;
  name: string;
  deleted: boolean;
  role: OrgRole | null;
  status: string | null;
  scope_mode: 'all' | 'restricted' | null;
  scope_ids: string[] | null;
}

/** OrgStanding's fields as SQL over the aliases of standingJoins: the one definition both readers use. */
const STANDING_FIELDS: [keyof OrgStanding, string][] = [
  ['id', 'o.id'],
  ['name', 'o.name'],
  ['deleted', 'o.deleted_at IS NOT NULL'],
  ['role', 'm.role'],
  ['status', 'm.status'],
  ['scope_mode', 'd.mode'],
  ['scope_ids', 'd.rightsholder_ids'],
];

/** The joins from organization `o` to the user's membership `m` and data-access role `d`. */
export function standingJoins(user: string): string {
  return `LEFT JOIN memberships m ON m.organization_id = o.id AND m.user_id = ${user}
     LEFT JOIN data_access_roles d ON d.organization_id = o.id AND d.user_id = ${user}`;
}

/** The standing as a select list (`o.id AS id, …`). */
export const standingColumns = STANDING_FIELDS.map(([name, sql]) => `${sql} AS ${name}`).join(', ');

/** The standing as one JSON object, NULL without an organization row. */
export const standingJson = `CASE WHEN o.id IS NOT NULL THEN json_build_object(${STANDING_FIELDS.map(([name, sql]) => `'${name}', ${sql}`).join(', ')}) END`;

export interface PrefetchedOrg {
  organizationId: string;
  /** null: no such organization */
  row: OrgStanding | null;
  used: boolean;
}

/** Credentials as they arrive on a request, before any lookup. */
export interface Credentials {
  apiKey: string | undefined;
  bearerToken: string | undefined;
  /** the x-organization-id header */
  organizationId: string | undefined;
}

type Headers = Record<string, string | string[] | undefined>;

/**
 * The errorCode of a request that could be read two ways (a credential, x-api-key, Authorization or
 * a query parameter given twice; an API key beside a bearer token).
 */
export const AMBIGUOUS_REQUEST: ErrorCode = 'AMBIGUOUS_REQUEST';

/**
 * How many values a header carries. Node joins a repeated x-* header into one value with ", "
 * and keeps only the first of a repeated Authorization, so the raw headers (when given) count
 * the lines; a comma inside one x-api-key or x-organization-id counts too (no API key or uuid
 * holds one), not inside Authorization (a scheme's parameters are comma-separated: Digest).
 */
function valueCount(
  name: string,
  headers: Headers,
  rawHeaders: readonly string[] | undefined,
): number {
  let lines = 0;
  if (rawHeaders) {
    for (let i = 0; i < rawHeaders.length; i += 2)
      if (rawHeaders[i]!.toLowerCase() === name) lines++;
  }
  const value = headers[name];
  const values = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const joined = values.reduce(
    (n, v) => n + (name === 'authorization' ? 1 : v.split(',').length),
    0,
  );
  return Math.max(lines, joined);
}

/**
 * The credentials of a request. A request is refused (AppError) rather than read one way when it
 * could be read two: a header holding two values (the first or the last would win silently), or
 * an API key together with a bearer token (which would be the caller?). `rawHeaders` (the
 * request's raw header lines) also catches a repeated Authorization, which Node drops.
 */
export function credentialsFromHeaders(
  headers: Headers,
  rawHeaders?: readonly string[],
): Credentials {
  const one = (v: string | string[] | undefined) =>
    (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  for (const name of ['x-api-key', 'authorization'] as const) {
    if (valueCount(name, headers, rawHeaders) > 1) {
      throw new AppError(
        AMBIGUOUS_REQUEST,
        `The ${name === 'authorization' ? 'Authorization' : name} header was sent more than once (or holds a list): send exactly one credential`,
      );
    }
  }
  if (valueCount('x-organization-id', headers, rawHeaders) > 1) {
    throw new AppError(
      'ORGANIZATION_HEADER_REQUIRED',
      'The x-organization-id header was sent more than once (or holds a list): send exactly one organization id (a uuid)',
    );
  }
  const apiKey = one(headers['x-api-key']);
  const authorization = one(headers.authorization);
  const scheme = authorization?.split(/\s+/, 1)[0];
  const isBearer = scheme !== undefined && scheme.toLowerCase() === 'bearer';
  const bearer = isBearer ? authorization!.slice(scheme.length).trim() : undefined;
  if (apiKey !== undefined && isBearer) {
    throw new AppError(
      AMBIGUOUS_REQUEST,
      'Send one credential, not both: x-api-key (with x-organization-id) or Authorization: Bearer <token>',
    );
  }
  if (apiKey === undefined && authorization !== undefined) {
    if (!isBearer) {
      throw new AppError(
        'AUTH_REQUIRED',
        `The Authorization scheme ${scheme} is not accepted: send x-api-key or Authorization: Bearer <token>`,
      );
    }
    if (bearer === '')
      throw new AppError(
        'INVALID_ACCESS_TOKEN',
        'The Authorization header names the Bearer scheme but holds no token',
      );
  }
  return {
    apiKey,
    bearerToken: bearer || undefined,
    organizationId: one(headers['x-organization-id']),
  };
}
