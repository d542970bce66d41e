// What the export procedures share: the caller's data access, and the export id input.
import { z } from 'zod';
import { rightsholderScope, type RightsholderScope } from '../../access/dataAccess.ts';
import type { Principal } from '../../auth/principal.ts';
import type { Queryable } from '../../db/pool.ts';

export const exportIdField = z.uuid().describe('the export id (export.trigger answers it)');

export async function callerScope(db: Queryable, ctx: { org: { id: string }; principal: Principal | null }): Promise<RightsholderScope> {
  return rightsholderScope(db, ctx.org.id, ctx.principal!.userId);
}
