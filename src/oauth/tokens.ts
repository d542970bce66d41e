// Bearer access tokens as resource servers see them (the tRPC API here, the tool server next):
// an opaque token is looked up in oauth_models with its user, and must be unexpired and issued for
// the audience asked (RFC 8707: the tool server's tokens are not the API's, nor the reverse).
import { AppError } from '../errors.ts';
import type { Queryable } from '../db/pool.ts';
import type { Principal } from '../auth/principal.ts';
import type { PlatformRole } from '../access/roles.ts';
import { normalizeResource } from './urls.ts';

export interface AccessTokenInfo {
  userId: string;
  email: string;
  platformRole: PlatformRole | null;
  clientId: string;
  grantId: string;
  scopes: string[];
  audience: string;
  /** seconds since the epoch */
  expiresAt: number;
}

interface TokenRow {
  payload: {
    accountId?: string;
    clientId?: string;
    grantId?: string;
    scope?: string;
    aud?: string | string[];
    exp?: number;
  };
  userId: string | null;
  email: string | null;
  platformRole: PlatformRole | null;
}

/**
 * The token's holder, or an AppError: INVALID_ACCESS_TOKEN (unknown, revoked, expired) or
 * ACCESS_TOKEN_AUDIENCE (issued for another resource). The clock is the process's (Date.now).
 */
export async function verifyAccessToken(
  db: Queryable,
  token: string,
  audience: string,
): Promise<AccessTokenInfo> {
  // oidc-provider's opaque tokens are 43 base64url characters; anything else is not one
  if (!/^[A-Za-z0-9_-]{20,100}$/.test(token)) throw new AppError('INVALID_ACCESS_TOKEN');
  const { rows } = await db.query<TokenRow>({
    name: 'oauth_access_token',
    text: `SELECT t.payload, u.id AS "userId", u.email, u.platform_role AS "platformRole"
           FROM oauth_models t LEFT JOIN users u ON u.id::text = t.payload->>'accountId'
           WHERE t.model = 'AccessToken' AND t.id = $1`,
    values: [token],
  });
  const row = rows[0];
  const p = row?.payload;
  if (!row || !p || !row.userId || !p.clientId || !p.grantId)
    throw new AppError('INVALID_ACCESS_TOKEN');
  if (typeof p.exp !== 'number' || p.exp <= Date.now() / 1000)
    throw new AppError('INVALID_ACCESS_TOKEN', 'The access token has expired: refresh it');
  const audiences = (Array.isArray(p.aud) ? p.aud : [p.aud])
    .filter((a): a is string => typeof a === 'string')
    .map(normalizeResource);
  if (!audiences.includes(normalizeResource(audience))) {
    throw new AppError(
      'ACCESS_TOKEN_AUDIENCE',
      `The access token was issued for ${audiences.join(', ') || 'no resource'}, not for ${audience} (RFC 8707 resource)`,
    );
  }
  return {
    userId: row.userId,
    email: row.email!,
    platformRole: row.platformRole,
    clientId: p.clientId,
    grantId: p.grantId,
    scopes: (p.scope ?? '').split(' ').filter(Boolean),
    audience: normalizeResource(audience),
    expiresAt: p.exp,
  };
}

/** The API's principal for a verified token: the person, through that client. */
export function principalForToken(info: AccessTokenInfo): Principal {
  return {
    kind: 'bearer',
    userId: info.userId,
    email: info.email,
    platformRole: info.platformRole,
    apiKey: null,
    oauth: { clientId: info.clientId, grantId: info.grantId },
  };
}
