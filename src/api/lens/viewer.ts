import type { LensViewer } from '../../lenses/store.ts';
import type { OrgAccess } from '../../access/organization.ts';

export function lensViewer(ctx: { org: OrgAccess; principal: { userId: string } }): LensViewer {
  return { organizationId: ctx.org.id, userId: ctx.principal.userId };
}
