// file.* treats statements as files: what deleting some would remove, and removing it all.
import type { Queryable } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { callerScope } from '../upload/shared.ts';

export interface FileToDelete {
  id: string;
  fileName: string;
  status: string;
  rightsholderId: string;
  keptRows: number | null;
  netEarnings: string | null;
  currency: string | null;
  objectKeys: string[];
}

/** The statements of one upload the caller may see, by id; any other id answers NOT_FOUND. */
export async function filesOfUpload(
  db: Queryable,
  caller: { organizationId: string; userId: string },
  uploadId: string,
  fileIds: string[],
  lock = false,
): Promise<FileToDelete[]> {
  const scope = await callerScope(db, caller);
  const { rows } = await db.query<FileToDelete & { variants: Record<string, string>; objectKey: string }>(
    `SELECT id, file_name AS "fileName", status, rightsholder_id AS "rightsholderId", kept_rows AS "keptRows",
       net_earnings::text AS "netEarnings", currency, variants, object_key AS "objectKey"
     FROM statements WHERE organization_id = $1 AND upload_id = $2 AND id = ANY ($3) AND ($4::uuid[] IS NULL OR rightsholder_id = ANY ($4))
     ORDER BY created_at, id ${lock ? 'FOR UPDATE' : ''}`,
    [caller.organizationId, uploadId, fileIds, scope],
  );
  const found = new Set(rows.map((r) => r.id));
  const missing = fileIds.filter((id) => !found.has(id));
  if (missing.length > 0) throw new AppError('STATEMENT_NOT_FOUND', `No file with id ${missing[0]} in that upload`);
  return rows.map(({ variants, objectKey, ...r }) => ({ ...r, objectKeys: [...new Set([objectKey, ...Object.values(variants)])] }));
}
