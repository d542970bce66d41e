import { getApiKeyInOrganization, type ApiKeyRecord } from '../../auth/apiKeys.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import type { OrgAccess } from '../../trpc/procedure.ts';

/**
 * The key an admin may manage in this organization: one they own, or any key whose scope is this
 * organization alone (a key spanning other organizations belongs to their admins as well).
 */
export async function manageableApiKey(db: Queryable, principal: Principal, org: OrgAccess, id: string): Promise<ApiKeyRecord> {
  const key = await getApiKeyInOrganization(db, id, org.id);
  if (!key) throw new AppError('API_KEY_NOT_FOUND');
  const soleOrganization = key.organizationIds.length === 1;
  if (key.userId !== principal.userId && !soleOrganization && principal.platformRole !== 'c2_superadmin') {
    throw new AppError('API_KEY_NOT_MANAGEABLE');
  }
  return key;
}
