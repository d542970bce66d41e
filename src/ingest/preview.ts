// mapping.processSample: the pipeline's own code path (locate, then normalize in a worker) on a
// few rows of a statement, with a mapping that need not be saved yet. Nothing is written.
import { tableOf } from './fileTypes.ts';
import { randomBytes } from 'node:crypto';
import { mkdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { NormalizeOutput } from './normalizeTypes.ts';
import { inRightsholderScope, type RightsholderScope } from '../access/dataAccess.ts';
import { AppError } from '../errors.ts';
import type { Deps } from '../deps.ts';
import type { MappingFields } from './mappingFields.ts';
import { locateStatementFile } from './pipeline.ts';

export interface PreviewInput {
  organizationId: string;
  /** the caller's data access: a statement of a rightsholder outside it is not found */
  scope: RightsholderScope;
  statementId: string;
  fields: MappingFields;
  /** 0-based data row to start at, inclusive */
  startRow: number;
  /** 0-based data row to end at, exclusive */
  endRow: number;
  /** the values of the mapping's variables (default: the statement's, given with its upload) */
  variables?: Record<string, string> | undefined;
  /** the file name the mapping's fromFileName values read (default: the statement's) */
  fileName?: string;
}

export interface PreviewResult {
  header: string[];
  headerHash: string;
  rows: Record<string, unknown>[];
  issues: NormalizeOutput['issues'];
}

export async function previewSample(deps: Deps, input: PreviewInput): Promise<PreviewResult> {
  const { rows } = await deps.pool.query<{
    object_key: string;
    file_name: string;
    status: string;
    variables: Record<string, string>;
    encoding: string | null;
  }>(
    `SELECT object_key, file_name, status, variables, encoding FROM statements
     WHERE organization_id = $1 AND id = $2 AND deleted_at IS NULL AND ${inRightsholderScope('rightsholder_id', '$3')}`,
    [input.organizationId, input.statementId, input.scope],
  );
  const statement = rows[0];
  if (!statement) throw new AppError('STATEMENT_NOT_FOUND');
  if (
    statement.status === 'uploading' ||
    statement.status === 'aborted' ||
    statement.status === 'expired'
  ) {
    throw new AppError(
      'STATEMENT_STATE_CONFLICT',
      `A statement that is ${statement.status} has no file to sample`,
    );
  }
  const workDir = path.join(
    tmpdir(),
    'royalty-preview',
    `${input.statementId}-${randomBytes(4).toString('hex')}`,
  );
  await mkdir(workDir, { recursive: true });
  try {
    const { located } = await locateStatementFile(
      deps,
      statement.object_key,
      statement.file_name,
      workDir,
      { encoding: statement.encoding },
    );
    const out = await deps.threads.normalize({
      ...tableOf(located),
      fields: input.fields,
      fileName: input.fileName || statement.file_name,
      variables: input.variables ?? statement.variables,
      statementId: input.statementId,
      organizationId: input.organizationId,
      rightsholderId: '00000000-0000-0000-0000-000000000000',
      outPath: null,
      removedPath: null,
      range: { start: input.startRow + 1, end: input.endRow + 1 },
      threads: 1,
      memoryLimitMb: 512,
      timeBudgetMs: 60_000,
    });
    return {
      header: located.header,
      headerHash: located.headerHash,
      rows: out.preview ?? [],
      issues: out.issues,
    };
  } finally {
    await rm(workDir, { recursive: true, force: true });
  }
}
