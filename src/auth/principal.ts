import type { OrgRole, PlatformRole } from '../trpc/roles.ts';

/** Who is calling. OAuth bearer tokens (a later issue) resolve to the same shape. */
export interface Principal {
  kind: 'api_key' | 'bearer' | 'cube_session';
  userId: string;
  email: string;
  platformRole: PlatformRole | null;
  /** set for API-key calls: the key's explicit scope */
  apiKey: { id: string; organizationIds: string[]; patterns: string[] } | null;
  /** set for embed-session calls (src/analytics/sessions.ts): cube reads of one organization only */
  cubeSession?: { id: string; organizationId: string; patterns: string[] | null };
  /**
   * The caller's standing in the x-organization-id organization, read in the same round trip as
   * the key; organizationAccess() uses it once instead of reading it again (src/trpc/procedure.ts).
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

export function credentialsFromHeaders(headers: Record<string, string | string[] | undefined>): Credentials {
  const one = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v)?.trim() || undefined;
  const authorization = one(headers.authorization);
  const bearer = authorization && /^bearer\s+/i.test(authorization) ? authorization.replace(/^bearer\s+/i, '') : undefined;
  return { apiKey: one(headers['x-api-key']), bearerToken: bearer, organizationId: one(headers['x-organization-id']) };
}
