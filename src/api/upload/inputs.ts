// Input schemas the upload and file procedures share.
import { z } from 'zod';
import { likeContains } from '../../db/sql.ts';

/**
 * An id as stored and answered: a UUID in any case, lower-cased, so that an id sent in capitals
 * names the same row and compares equal to the stored one wherever ids are compared or echoed.
 */
export const storedId = () => z.uuid().transform((id) => id.toLowerCase());

/**
 * The `customName` filter of upload.statements and file.list: trimmed, as uploadFile stores the
 * name, and matched as a case-insensitive substring like the name filters (`%`, `_` and `\` are
 * characters); blank is no filter. As the ILIKE pattern of a `text` parameter (null: no filter).
 */
export const customNameFilter = z
  .string()
  .trim()
  .max(200)
  .transform((name) => (name === '' ? null : likeContains(name)));
