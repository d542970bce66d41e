import type { LensViewer } from '../../lenses/store.ts';
import type { OrgAccess } from '../../trpc/procedure.ts';

export function lensViewer(ctx: { org: OrgAccess; principal: { userId: string } }): LensViewer {
  return { organizationId: ctx.org.id, userId: ctx.principal.userId };
}
