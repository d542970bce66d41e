// The authorization server's keys, kept in PostgreSQL (oauth_keys) so that every API process signs
// and verifies with the same ones and a restart changes nothing: ES256 signing keys (private JWKs)
// and the secret its cookies are signed with. The newest key signs; older ones remain published
// until a rotation removes them, so what they signed stays verifiable through the rotation.
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import type { JWK } from 'oidc-provider';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';

const KEYS_LOCK = 72_100_240;
/** signing keys kept by a rotation: the new one and the one before (tokens it signed are checked still) */
const KEPT_SIGNING_KEYS = 2;

export interface KeySet {
  signing: JWK[];
  cookieSecrets: string[];
  /** changes whenever a key is added or removed */
  fingerprint: string;
}

function newSigningKey(): { id: string; secret: JWK } {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = randomBytes(12).toString('base64url');
  return {
    id: kid,
    secret: { ...(privateKey.export({ format: 'jwk' }) as JWK), kid, alg: 'ES256', use: 'sig' },
  };
}

function newCookieSecret(): { id: string; secret: string } {
  return {
    id: `cookie-${randomBytes(9).toString('base64url')}`,
    secret: randomBytes(32).toString('base64url'),
  };
}

async function insertKey(
  db: Queryable,
  kind: 'signing' | 'cookie',
  key: { id: string; secret: unknown },
): Promise<void> {
  await db.query('INSERT INTO oauth_keys (id, kind, secret) VALUES ($1, $2, $3)', [
    key.id,
    kind,
    JSON.stringify(key.secret),
  ]);
}

/** The keys, newest first; the first start of an installation makes them (one process does, under a lock). */
export async function loadKeys(pool: Pool): Promise<KeySet> {
  let rows = await readKeys(pool);
  if (!rows.some((r) => r.kind === 'signing') || !rows.some((r) => r.kind === 'cookie')) {
    rows = await withTransaction(pool, async (db) => {
      await db.query('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK]);
      const current = await readKeys(db);
      if (!current.some((r) => r.kind === 'signing'))
        await insertKey(db, 'signing', newSigningKey());
      if (!current.some((r) => r.kind === 'cookie'))
        await insertKey(db, 'cookie', newCookieSecret());
      return readKeys(db);
    });
  }
  return {
    signing: rows.filter((r) => r.kind === 'signing').map((r) => r.secret as JWK),
    cookieSecrets: rows.filter((r) => r.kind === 'cookie').map((r) => r.secret as string),
    fingerprint: createHash('sha256')
      .update(rows.map((r) => r.id).join(','))
      .digest('base64url'),
  };
}

async function readKeys(db: Queryable): Promise<{ id: string; kind: string; secret: unknown }[]> {
  const { rows } = await db.query<{ id: string; kind: string; secret: unknown }>(
    'SELECT id, kind, secret FROM oauth_keys ORDER BY created_at DESC, id',
  );
  return rows;
}

/**
 * A new signing key and cookie secret become the ones in use; of the older ones the previous stays
 * (what it signed still verifies, a cookie it signed still reads), anything older goes.
 * Running processes take the new keys within KEY_RELOAD_MS.
 */
export async function rotateKeys(pool: Pool): Promise<{ signingKeyId: string; removed: number }> {
  return withTransaction(pool, async (db) => {
    await db.query('SELECT pg_advisory_xact_lock($1)', [KEYS_LOCK]);
    const signing = newSigningKey();
    await insertKey(db, 'signing', signing);
    await insertKey(db, 'cookie', newCookieSecret());
    const { rowCount } = await db.query(
      `DELETE FROM oauth_keys k WHERE id IN (
         SELECT id FROM (SELECT id, row_number() OVER (PARTITION BY kind ORDER BY created_at DESC, id) AS n FROM oauth_keys) r
         WHERE r.n > $1)`,
      [KEPT_SIGNING_KEYS],
    );
    return { signingKeyId: signing.id, removed: rowCount ?? 0 };
  });
}

/** how often a process looks for rotated keys */
export const KEY_RELOAD_MS = 60_000;
