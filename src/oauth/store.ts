// SQL on oauth_models outside oidc-provider's adapter (which uses revokeGrant too): kept free of
// oidc-provider itself, which is loaded only when the authorization server first answers.
import { endCubeSessionsOfGrant } from '../analytics/sessions.ts';
import type { Queryable } from '../db/pool.ts';

/** Everything issued under a grant (codes, access and refresh tokens, embed sessions, the grant itself) goes. */
export async function revokeGrant(db: Queryable, grantId: string): Promise<void> {
  await db.query(`DELETE FROM oauth_models WHERE grant_id = $1 OR (model = 'Grant' AND id = $1)`, [
    grantId,
  ]);
  await endCubeSessionsOfGrant(db, grantId);
}

/** A registered client that obtained a token no longer expires for want of use. */
export async function markClientUsed(db: Queryable, clientId: string): Promise<void> {
  await db.query(
    `UPDATE oauth_models SET expires_at = NULL WHERE model = 'Client' AND id = $1 AND expires_at IS NOT NULL`,
    [clientId],
  );
}

/** Rows past their expiry: oidc-provider ignores them; this removes them. */
export async function deleteExpired(db: Queryable): Promise<number> {
  const { rowCount } = await db.query('DELETE FROM oauth_models WHERE expires_at < now()');
  return rowCount ?? 0;
}
