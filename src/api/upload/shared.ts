// What the upload procedures share: finding a statement the caller may see, and the caller's
// rightsholder scope as a SQL condition.
import { rightsholderScope, type RightsholderScope } from '../../access/dataAccess.ts';
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';

export interface Caller {
  organizationId: string;
  userId: string;
}

export async function callerScope(db: Queryable, caller: Caller): Promise<RightsholderScope> {
  return rightsholderScope(db, caller.organizationId, caller.userId);
}

/** A statement of the organization within the caller's data access, locked when asked. */
export async function visibleStatement(
  db: Queryable,
  caller: Caller,
  statementId: string,
  opts: { lock?: boolean } = {},
): Promise<{ id: string; status: string; uploadId: string; rightsholderId: string; objectKey: string; declaredSize: number | null; fileName: string }> {
  const scope = await callerScope(db, caller);
  const { rows } = await db.query(
    `SELECT id, status, upload_id AS "uploadId", rightsholder_id AS "rightsholderId", object_key AS "objectKey",
       declared_size AS "declaredSize", file_name AS "fileName"
     FROM statements WHERE organization_id = $1 AND id = $2 AND ($3::uuid[] IS NULL OR rightsholder_id = ANY ($3))
     ${opts.lock ? 'FOR UPDATE' : ''}`,
    [caller.organizationId, statementId, scope],
  );
  if (!rows[0]) throw new AppError('STATEMENT_NOT_FOUND');
  return rows[0];
}
