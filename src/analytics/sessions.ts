// Embed sessions (cube.getSession): a short-lived bearer token `cs_…` that lets an embedded
// dashboard read the analytics of one organization and nothing else. Its principal is the member
// who made it, so their role and data access apply on every call (and end with their
// membership); the token itself only narrows: cube reads of that organization, within the
// procedure patterns of the API key that created it.
import { randomBytes } from 'node:crypto';
import { scopeAllows } from '../auth/apiKeys.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import type { PlatformRole } from '../access/roles.ts';

const CUBE_SESSION_PREFIX = 'cs_';

export interface CubeSession {
  sessionId: string;
  token: string;
  organizationId: string;
  expiresAt: string;
}

interface SessionRow {
  id: string;
  token: string;
  organization_id: string;
  expires_at: Date;
}

const toSession = (r: SessionRow): CubeSession => ({
  sessionId: r.id,
  token: r.token,
  organizationId: r.organization_id,
  expiresAt: r.expires_at.toISOString(),
});

/**
 * The caller's live session of the organization when at least half of its lifetime is left (made
 * with the same API key and procedure patterns, or under the same OAuth grant), else a new one. A
 * session made with an API key is bound to it: it ends when the key is deleted, rotated, or its
 * patterns or organizations change (updateApiKey), so revoking a leaked key revokes what was
 * minted with it. One made with a bearer token is bound to its grant the same way
 * (endCubeSessionsOfGrant).
 */
export async function getOrCreateCubeSession(
  db: Queryable,
  owner: {
    organizationId: string;
    userId: string;
    apiKeyId: string | null;
    oauthGrantId: string | null;
    patterns: string[] | null;
  },
  ttlSeconds: number,
): Promise<CubeSession> {
  const { rows } = await db.query<SessionRow>(
    `SELECT id, token, organization_id, expires_at FROM cube_sessions
     WHERE organization_id = $1 AND user_id = $2 AND procedure_patterns IS NOT DISTINCT FROM $3::text[]
       AND api_key_id IS NOT DISTINCT FROM $5::uuid AND oauth_grant_id IS NOT DISTINCT FROM $6::text
       AND expires_at > now() + make_interval(secs => $4::double precision / 2)
     ORDER BY expires_at DESC LIMIT 1`,
    [
      owner.organizationId,
      owner.userId,
      owner.patterns,
      ttlSeconds,
      owner.apiKeyId,
      owner.oauthGrantId,
    ],
  );
  if (rows[0]) return toSession(rows[0]);
  // expired sessions are of no use to anybody
  await db.query(`DELETE FROM cube_sessions WHERE expires_at < now() - interval '1 day'`);
  const token = CUBE_SESSION_PREFIX + randomBytes(32).toString('base64url');
  const created = await db.query<SessionRow>(
    `INSERT INTO cube_sessions (organization_id, user_id, token, procedure_patterns, api_key_id, oauth_grant_id, expires_at)
     VALUES ($1, $2, $3, $4, $6, $7, now() + make_interval(secs => $5::double precision))
     RETURNING id, token, organization_id, expires_at`,
    [
      owner.organizationId,
      owner.userId,
      token,
      owner.patterns,
      ttlSeconds,
      owner.apiKeyId,
      owner.oauthGrantId,
    ],
  );
  return toSession(created.rows[0]!);
}

/** A revoked OAuth grant's embed sessions end with its tokens (src/oauth/store.ts, adapter.ts). */
export async function endCubeSessionsOfGrant(db: Queryable, grantId: string): Promise<void> {
  await db.query('DELETE FROM cube_sessions WHERE oauth_grant_id = $1', [grantId]);
}

/** The principal of a live session token, or null. */
async function principalForCubeSession(db: Queryable, token: string): Promise<Principal | null> {
  if (!token.startsWith(CUBE_SESSION_PREFIX) || token.length > 200) return null;
  const { rows } = await db.query<{
    id: string;
    organization_id: string;
    patterns: string[] | null;
    user_id: string;
    email: string;
    platform_role: PlatformRole | null;
    snapshot: string;
  }>(
    `SELECT s.id, s.organization_id, s.procedure_patterns AS patterns, u.id AS user_id, u.email, u.platform_role,
            pg_current_snapshot()::text AS snapshot
     FROM cube_sessions s JOIN users u ON u.id = s.user_id WHERE s.token = $1 AND s.expires_at > now()`,
    [token],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    kind: 'cube_session',
    userId: row.user_id,
    email: row.email,
    platformRole: row.platform_role,
    apiKey: null,
    cubeSession: { id: row.id, organizationId: row.organization_id, patterns: row.patterns },
    snapshot: { text: row.snapshot, used: false },
  };
}

/** Whether a session principal may call the procedure: cube reads only, never getSession. */
function cubeSessionAllows(
  session: NonNullable<Principal['cubeSession']>,
  procedure: string,
): boolean {
  if (!procedure.startsWith('cube.') || procedure === 'cube.getSession') return false;
  return session.patterns === null || scopeAllows(session.patterns, procedure);
}

/**
 * The embed sessions' rules as the procedure chain takes them (SessionTokens, src/trpc/context.ts):
 * the app hands them to each request's context, and the handler tests to theirs.
 */
export const cubeSessionTokens = {
  prefix: CUBE_SESSION_PREFIX,
  principal: principalForCubeSession,
  allows: cubeSessionAllows,
};
