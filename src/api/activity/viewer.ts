import { rightsholderScope } from '../../access/dataAccess.ts';
import type { ActivityViewer } from '../../activity/feed.ts';
import type { Queryable } from '../../db/pool.ts';

export async function activityViewer(db: Queryable, organizationId: string, userId: string): Promise<ActivityViewer> {
  return { organizationId, userId, rightsholderScope: await rightsholderScope(db, organizationId, userId) };
}
