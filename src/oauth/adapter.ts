// oidc-provider's storage in PostgreSQL (table oauth_models, migration 000029): one row per model
// instance. Codes, device codes and refresh tokens are consumed atomically: of two requests racing
// with one, exactly one wins, and the loser is treated as a reuse, revoking the grant (the whole
// token family, RFC 9700 4.14.2).
import type { Adapter, AdapterPayload } from 'oidc-provider';
import { errors } from 'oidc-provider';
import type { Queryable } from '../db/pool.ts';
import { endCubeSessionsOfGrant } from '../analytics/sessions.ts';
import { markClientUsed, revokeGrant } from './store.ts';

/** Models consumed once: a second consume is a replay. */
const SINGLE_USE = new Set(['AuthorizationCode', 'RefreshToken', 'DeviceCode']);

export interface AdapterOptions {
  /** how long a dynamically registered client lives until it first obtains a token (seconds) */
  unusedClientTtlSeconds: number;
}

type Row = { payload: AdapterPayload; consumed: boolean };

/** One model's rows of oauth_models: what oidc-provider stores, finds, consumes and revokes. */
class PostgresAdapter implements Adapter {
  constructor(
    private readonly db: Queryable,
    private readonly options: AdapterOptions,
    readonly model: string,
  ) {}

  async upsert(id: string, payload: AdapterPayload, expiresIn?: number): Promise<void> {
    // a registered client expires unless it gets a token (markClientUsed); an update keeps its expiry
    const ttl = expiresIn ?? (this.model === 'Client' ? this.options.unusedClientTtlSeconds : null);
    await this.db.query(
      `INSERT INTO oauth_models (model, id, payload, grant_id, user_code, uid, expires_at)
       VALUES ($1, $2, $3, $4, $5, $6, CASE WHEN $7::int IS NULL THEN NULL ELSE now() + make_interval(secs => $7::int) END)
       ON CONFLICT (model, id) DO UPDATE SET payload = EXCLUDED.payload, grant_id = EXCLUDED.grant_id,
         user_code = EXCLUDED.user_code, uid = EXCLUDED.uid,
         expires_at = CASE WHEN $1 = 'Client' THEN oauth_models.expires_at ELSE EXCLUDED.expires_at END`,
      [
        this.model,
        id,
        JSON.stringify(payload),
        payload.grantId ?? null,
        payload.userCode ?? null,
        payload.uid ?? null,
        ttl,
      ],
    );
    // a registered client that obtained a token is kept; one that never did expires
    if (this.model === 'AccessToken' && typeof payload.clientId === 'string')
      await markClientUsed(this.db, payload.clientId);
  }

  private async findWhere(
    column: 'id' | 'user_code' | 'uid',
    value: string,
  ): Promise<AdapterPayload | undefined> {
    const { rows } = await this.db.query<Row>(
      `SELECT payload, consumed_at IS NOT NULL AS consumed FROM oauth_models
       WHERE model = $1 AND ${column} = $2 AND (expires_at IS NULL OR expires_at > now())`,
      [this.model, value],
    );
    const row = rows[0];
    if (!row) return undefined;
    return row.consumed ? { ...row.payload, consumed: true } : row.payload;
  }

  find(id: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('id', id);
  }

  findByUserCode(userCode: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('user_code', userCode);
  }

  findByUid(uid: string): Promise<AdapterPayload | undefined> {
    return this.findWhere('uid', uid);
  }

  async consume(id: string): Promise<void> {
    const { rowCount } = await this.db.query(
      'UPDATE oauth_models SET consumed_at = now() WHERE model = $1 AND id = $2 AND consumed_at IS NULL',
      [this.model, id],
    );
    if (rowCount === 1 || !SINGLE_USE.has(this.model)) return;
    // another request consumed it between oidc-provider's read and this write: a replay
    const { rows } = await this.db.query<{ grantId: string | null }>(
      'SELECT grant_id AS "grantId" FROM oauth_models WHERE model = $1 AND id = $2',
      [this.model, id],
    );
    if (rows[0]?.grantId) await revokeGrant(this.db, rows[0].grantId);
    throw new errors.InvalidGrant(
      `${this.model === 'RefreshToken' ? 'refresh token' : 'code'} already used`,
    );
  }

  async destroy(id: string): Promise<void> {
    await this.db.query('DELETE FROM oauth_models WHERE model = $1 AND id = $2', [this.model, id]);
  }

  async revokeByGrantId(grantId: string): Promise<void> {
    await this.db.query('DELETE FROM oauth_models WHERE model = $1 AND grant_id = $2', [
      this.model,
      grantId,
    ]);
    // every revocation of a grant (the revocation endpoint, refresh-token reuse, signing out)
    // revokes its access tokens here: the embed sessions made with them end too
    if (this.model === 'AccessToken') await endCubeSessionsOfGrant(this.db, grantId);
  }
}

/** oidc-provider's adapter class over `db`: one instance per model. */
export function postgresAdapter(
  db: Queryable,
  options: AdapterOptions,
): new (model: string) => Adapter {
  return class extends PostgresAdapter {
    constructor(model: string) {
      super(db, options, model);
    }
  };
}
