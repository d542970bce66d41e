// Creates (or reuses) a user as the owner of a new organization, with an API key of full scope
// for it. Used by `admin bootstrap` and by the demo set-up on first start.
import { createApiKey } from '../auth/apiKeys.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import type { PlatformRole } from '../access/roles.ts';

export interface BootstrapResult {
  organizationId: string;
  userId: string;
  apiKey: string;
}

export async function upsertUser(
  db: Queryable,
  email: string,
  platformRole?: PlatformRole,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO users (email, platform_role) VALUES ($1, $2)
     ON CONFLICT ((lower(email))) DO UPDATE SET platform_role = COALESCE(EXCLUDED.platform_role, users.platform_role), updated_at = now()
     RETURNING id`,
    [email.trim(), platformRole ?? null],
  );
  return rows[0]!.id;
}

export interface BootstrapArgs {
  email: string;
  organizationName: string;
  platformRole?: PlatformRole | undefined;
}

export async function bootstrap(pool: Pool, args: BootstrapArgs): Promise<BootstrapResult> {
  return withTransaction(pool, (db) => bootstrapIn(db, args));
}

/** bootstrap inside the caller's transaction. */
export async function bootstrapIn(db: Queryable, args: BootstrapArgs): Promise<BootstrapResult> {
  const userId = await upsertUser(db, args.email, args.platformRole);
  const { rows } = await db.query<{ id: string }>(
    'INSERT INTO organizations (name) VALUES ($1) RETURNING id',
    [args.organizationName.trim()],
  );
  const organizationId = rows[0]!.id;
  await db.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'owner')`,
    [organizationId, userId],
  );
  const { key } = await createApiKey(db, {
    userId,
    name: 'bootstrap',
    organizationIds: [organizationId],
    patterns: ['*'],
  });
  return { organizationId, userId, apiKey: key };
}

/** True when the database holds no organization at all (a first start). */
export async function isEmptyInstallation(db: Queryable): Promise<boolean> {
  const { rows } = await db.query<{ empty: boolean }>(
    'SELECT NOT EXISTS (SELECT 1 FROM organizations) AS empty',
  );
  return rows[0]!.empty;
}
