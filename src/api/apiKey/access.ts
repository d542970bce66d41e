import { recordActivity } from '../../activity/record.ts';
import { getApiKeyInOrganization, type ApiKeyRecord } from '../../auth/apiKeys.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import type { OrgAccess } from '../../access/organization.ts';
import { roleRank } from '../../access/roles.ts';
import { userEmail, userRolesIn } from '../../organizations/userStore.ts';

/**
 * The key the caller may manage in this organization. A key acts as its owner, so its owner may do
 * anything with it; a platform operator too. Another admin may rename, re-scope or delete a key of
 * this organization alone whose owner does not outrank them, but never rotate it: the new secret
 * would let them act as its owner. A key spanning other organizations belongs to their admins as
 * well, so only its owner manages it.
 */
export async function manageableApiKey(
  db: Queryable,
  principal: Principal,
  org: OrgAccess,
  id: string,
  change: { rotate: boolean },
): Promise<ApiKeyRecord> {
  const key = await getApiKeyInOrganization(db, id, org.id, { lock: true });
  if (!key) throw new AppError('API_KEY_NOT_FOUND');
  if (key.userId === principal.userId || principal.platformRole === 'c2_superadmin') return key;
  if (key.organizationIds.length !== 1) {
    throw new AppError(
      'API_KEY_NOT_MANAGEABLE',
      'The key spans other organizations: only its owner may change it',
    );
  }
  if (change.rotate) {
    throw new AppError(
      'API_KEY_NOT_MANAGEABLE',
      "Only the key's owner may rotate it (the new secret would act as them); rename, re-scope or delete it instead",
    );
  }
  const owner = await userRolesIn(db, key.userId, org.id);
  if (owner?.platformRole || (owner?.role && roleRank(owner.role) > roleRank(org.role))) {
    throw new AppError(
      'API_KEY_NOT_MANAGEABLE',
      `The key's owner outranks you (${owner.platformRole ?? owner.role} above ${org.role})`,
    );
  }
  return key;
}

/**
 * What the activity log of `organizationId` keeps of a key: never its secret, only the prefix it
 * is shown by, and of its organizations only this one (its members must not learn which other
 * organizations the key's owner works for).
 */
function described(key: ApiKeyRecord, organizationId: string) {
  const organizationIds = key.organizationIds.filter((id) => id === organizationId);
  return {
    id: key.id,
    name: key.name,
    prefix: key.prefix,
    patterns: key.patterns,
    organizationIds,
    rotatedAt: key.rotatedAt,
  };
}

/**
 * Records a change of an API key in the organization it was managed in, about the key's owner
 * (subject `user`): `before` and `after` (null once deleted); a change of nothing records nothing.
 */
export async function recordKeyChange(
  db: Queryable,
  principal: Principal,
  org: OrgAccess,
  action: 'apiKey.update' | 'apiKey.delete',
  before: ApiKeyRecord,
  after: ApiKeyRecord | null,
): Promise<void> {
  if (
    after &&
    JSON.stringify(described(before, org.id)) === JSON.stringify(described(after, org.id))
  )
    return;
  await recordActivity(db, principal, {
    organizationId: org.id,
    action,
    subjectType: 'user',
    subjectId: before.userId,
    subjectLabel: await userEmail(db, before.userId),
    changes: {
      apiKey: { before: described(before, org.id), after: after && described(after, org.id) },
    },
  });
}
