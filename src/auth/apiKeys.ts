// API keys: random secrets shown once, stored only as SHA-256 (a dump yields no usable key).
// A key is high-entropy, so a fast hash is enough: there is nothing to brute-force.
import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '../db/pool.ts';
import { standingJoins, standingJson, type OrgStanding, type Principal } from './principal.ts';
import type { PlatformRole } from '../access/roles.ts';

export const API_KEY_PREFIX = 'rk_';
const KEY_PREFIX = API_KEY_PREFIX;
export const PATTERN_RE = /^(\*|[a-zA-Z][a-zA-Z0-9]*(\.[a-zA-Z][a-zA-Z0-9]*){0,2}(\.\*)?)$/;

export function generateApiKey(): { key: string; hash: Buffer; prefix: string } {
  const key = KEY_PREFIX + randomBytes(32).toString('base64url');
  return { key, hash: hashApiKey(key), prefix: key.slice(0, KEY_PREFIX.length + 6) };
}

export function hashApiKey(key: string): Buffer {
  return createHash('sha256').update(key, 'utf8').digest();
}

/** `*` allows everything, `ns.*` a namespace (and its sub-namespaces), anything else one procedure. */
export function patternAllows(pattern: string, procedure: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return procedure.startsWith(pattern.slice(0, -1));
  return pattern === procedure;
}

export function scopeAllows(patterns: readonly string[], procedure: string): boolean {
  return patterns.some((p) => patternAllows(p, procedure));
}

/** Whether `outer` allows everything `inner` does: `*` covers all, `ns.*` its namespace's procedures and patterns. */
export function patternCovers(outer: string, inner: string): boolean {
  if (outer === '*') return true;
  if (inner === '*') return false;
  if (outer.endsWith('.*')) return inner.startsWith(outer.slice(0, -1));
  return outer === inner;
}

/** Whether the patterns `inner` grant nothing beyond the patterns `outer`. */
export function patternsWithin(inner: readonly string[], outer: readonly string[]): boolean {
  return inner.every((p) => outer.some((o) => patternCovers(o, p)));
}

export interface ApiKeyRecord {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  organizationIds: string[];
  patterns: string[];
  createdAt: string;
  rotatedAt: string | null;
  lastUsedAt: string | null;
}

const RECORD_COLUMNS = `id, user_id AS "userId", name, key_prefix AS prefix, organization_ids AS "organizationIds",
  procedure_patterns AS patterns, created_at AS "createdAt", rotated_at AS "rotatedAt", last_used_at AS "lastUsedAt"`;

export async function createApiKey(
  db: Queryable,
  args: { userId: string; name: string; organizationIds: string[]; patterns: string[] },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const { key, hash, prefix } = generateApiKey();
  const { rows } = await db.query<ApiKeyRecord>(
    `INSERT INTO api_keys (user_id, name, key_hash, key_prefix, organization_ids, procedure_patterns)
     VALUES ($1, $2, $3, $4, $5, $6) RETURNING ${RECORD_COLUMNS}`,
    [args.userId, args.name, hash, prefix, args.organizationIds, args.patterns],
  );
  return { key, record: rows[0]! };
}

export async function listApiKeys(
  db: Queryable,
  filter: { userId?: string; organizationId?: string },
): Promise<ApiKeyRecord[]> {
  const { rows } = await db.query<ApiKeyRecord>(
    `SELECT ${RECORD_COLUMNS} FROM api_keys
     WHERE ($1::uuid IS NULL OR user_id = $1) AND ($2::uuid IS NULL OR $2 = ANY (organization_ids))
     ORDER BY created_at, id`,
    [filter.userId ?? null, filter.organizationId ?? null],
  );
  return rows;
}

/** The key visible in an organization (its scope names the organization), or undefined. */
export async function getApiKeyInOrganization(
  db: Queryable,
  id: string,
  organizationId: string,
  opts: { lock?: boolean } = {},
): Promise<ApiKeyRecord | undefined> {
  const { rows } = await db.query<ApiKeyRecord>(
    `SELECT ${RECORD_COLUMNS} FROM api_keys WHERE id = $1 AND $2 = ANY (organization_ids)${opts.lock ? ' FOR UPDATE' : ''}`,
    [id, organizationId],
  );
  return rows[0];
}

export async function updateApiKey(
  db: Queryable,
  id: string,
  changes: {
    name?: string | undefined;
    patterns?: string[] | undefined;
    organizationIds?: string[] | undefined;
    rotate: boolean;
  },
): Promise<{ key: string | null; record: ApiKeyRecord }> {
  const fresh = changes.rotate ? generateApiKey() : null;
  const { rows } = await db.query<ApiKeyRecord>(
    `UPDATE api_keys SET
       name = COALESCE($2, name),
       procedure_patterns = COALESCE($3, procedure_patterns),
       organization_ids = COALESCE($4, organization_ids),
       key_hash = COALESCE($5, key_hash),
       key_prefix = COALESCE($6, key_prefix),
       rotated_at = CASE WHEN $5::bytea IS NULL THEN rotated_at ELSE now() END
     WHERE id = $1 RETURNING ${RECORD_COLUMNS}`,
    [
      id,
      changes.name ?? null,
      changes.patterns ?? null,
      changes.organizationIds ?? null,
      fresh?.hash ?? null,
      fresh?.prefix ?? null,
    ],
  );
  // the embed sessions minted with the key end with its secret, patterns or organizations (a
  // deleted key's go by the foreign key): what a leaked key made is revoked with it
  if (changes.rotate || changes.patterns !== undefined || changes.organizationIds !== undefined) {
    await db.query('DELETE FROM cube_sessions WHERE api_key_id = $1', [id]);
  }
  return { key: fresh?.key ?? null, record: rows[0]! };
}

export async function deleteApiKey(db: Queryable, id: string): Promise<void> {
  await db.query('DELETE FROM api_keys WHERE id = $1', [id]);
}

/** The principal an API key stands for, or null when the key is unknown. */
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The key's principal; with `organizationId` (the x-organization-id header) also the user's
 * standing in that organization, in the same round trip (Principal.prefetchedOrg).
 */
export async function principalForApiKey(
  db: Queryable,
  key: string,
  organizationId?: string,
): Promise<Principal | null> {
  if (key.length > 200) return null;
  const org =
    organizationId !== undefined && UUID.test(organizationId) ? organizationId.toLowerCase() : null;
  const { rows } = await db.query<{
    id: string;
    organizationIds: string[];
    patterns: string[];
    userId: string;
    email: string;
    platformRole: PlatformRole | null;
    standing: OrgStanding | null;
    snapshot: string;
  }>({
    // every API call runs this: prepared once per connection rather than planned each time
    name: 'api_key_principal',
    text: `SELECT k.id, k.organization_ids AS "organizationIds", k.procedure_patterns AS patterns,
            u.id AS "userId", u.email, u.platform_role AS "platformRole",
            ${standingJson} AS standing,
            pg_current_snapshot()::text AS snapshot
     FROM api_keys k JOIN users u ON u.id = k.user_id
     LEFT JOIN organizations o ON o.id = $2::uuid
     ${standingJoins('u.id')}
     WHERE k.key_hash = $1`,
    values: [hashApiKey(key), org],
  });
  const row = rows[0];
  if (!row) return null;
  return {
    kind: 'api_key',
    userId: row.userId,
    email: row.email,
    platformRole: row.platformRole,
    apiKey: { id: row.id, organizationIds: row.organizationIds, patterns: row.patterns },
    ...(org !== null
      ? { prefetchedOrg: { organizationId: org, row: row.standing, used: false } }
      : {}),
    snapshot: { text: row.snapshot, used: false },
  };
}

// When this process last recorded each key's use: last_used_at is kept to the minute, so a key
// used within the minute is not written again (not even a no-op UPDATE: a statement per call).
const LAST_USED_PRECISION_MS = 60_000;
const lastUsedWrites = new Map<string, number>();

/** Records a key's use in last_used_at, at most once a minute per key and process; never waited for. */
export function recordApiKeyUse(db: Queryable, keyId: string): void {
  const now = Date.now();
  if (now - (lastUsedWrites.get(keyId) ?? -Infinity) < LAST_USED_PRECISION_MS) return;
  if (lastUsedWrites.size >= 10_000) lastUsedWrites.clear();
  lastUsedWrites.set(keyId, now);
  void db
    .query(
      `UPDATE api_keys SET last_used_at = now()
       WHERE id = $1 AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')`,
      [keyId],
    )
    .catch(() => {});
}
