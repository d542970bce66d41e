// Confident automatic mapping of a layout no mapping knows. The pipeline calls autoMapStatement
// when findMappingForHeader finds nothing: the strict draft (draft.ts) is normalized in the
// normalizer's thread and proven (proof.ts); only a proven draft becomes an organization mapping
// (created like any other: editable, revisioned) that the statement is processed with, its record
// saying so (MappingMatch `by: 'automatic'`, flag `auto_mapped`). Anything short of proof leaves
// the statement in needs_mapping with the suggestion and the reasons. Never a silent guess.
import path from 'node:path';
import { mkdir, rm } from 'node:fs/promises';
import type { Deps } from '../../deps.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import { tableOf, type LocatedTable } from '../fileTypes.ts';
import { findMappingForHeader, type FoundMapping, type MappingMatch } from '../library.ts';
import { createMapping } from '../mappings.ts';
import type { MappingFields } from '../mappingFields.ts';
import { suggestMapping, type MappingSuggestion } from '../suggest.ts';
import { draftAutoMapping, type Draft } from './draft.ts';
import { statementFacts, withFactVariables, type StatementFacts } from './facts.ts';
import { proveMapping, type Proof } from './proof.ts';
import type { AutoMapReason } from './reasons.ts';
import type { AutoMapRecord } from './record.ts';

export { statementFacts, withFactVariables, type StatementFacts } from './facts.ts';

export interface AutoMapContext {
  deps: Deps;
  organizationId: string;
  statementId: string;
  statement: {
    file_name: string;
    variables: Record<string, string>;
    rightsholder_id: string;
    created_by: string | null;
  };
  located: LocatedTable;
  workDir: string;
  deadline: number | undefined;
}

/** The suggestion a statement waits in needs_mapping with, and why it was not applied. */
export type AwaitingSuggestion = MappingSuggestion & {
  automatic: { applied: false; reasons: AutoMapReason[]; facts: StatementFacts };
};

export type AutoMapOutcome = { found: FoundMapping } | { suggestion: AwaitingSuggestion };

/** The normalizer's errors a draft can cause, as reasons (a wrong column, a date order, an amount format). */
const DRAFT_ERRORS = new Set([
  'MAPPING_COLUMN_MISSING',
  'DATE_ORDER_AMBIGUOUS',
  'AMOUNT_FORMAT_CONFLICT',
  'STATEMENT_UNREADABLE',
]);

async function normalizeDraft(
  ctx: AutoMapContext,
  draft: Draft,
  facts: StatementFacts,
): Promise<Proof | AutoMapReason> {
  const { fields } = draft;
  const dir = path.join(ctx.workDir, 'automatic');
  await mkdir(dir, { recursive: true });
  try {
    const out = await ctx.deps.threads.normalize({
      ...tableOf(ctx.located),
      fields,
      fileName: ctx.statement.file_name,
      variables: withFactVariables(ctx.statement.variables, facts),
      statementId: ctx.statementId,
      organizationId: ctx.organizationId,
      rightsholderId: ctx.statement.rightsholder_id,
      outPath: path.join(dir, 'normalized.parquet'),
      removedPath: path.join(dir, 'removed.csv'),
      threads: 2,
      memoryLimitMb: 1024,
      timeBudgetMs: Math.max(1, (ctx.deadline ?? Date.now() + 30 * 60_000) - Date.now()),
    });
    return proveMapping(out, ctx.located, fields, draft.basis);
  } catch (error) {
    if (error instanceof AppError && DRAFT_ERRORS.has(error.errorCode))
      return {
        code: 'not_readable',
        message: error.message,
        details: { errorCode: error.errorCode },
      };
    throw error;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

function mappingName(suggestion: MappingSuggestion, fileName: string): string {
  const base = fileName
    .split(/[\\/]/)
    .pop()!
    .replace(/\.[A-Za-z0-9]{1,5}$/, '');
  return `${suggestion.distributor ?? base} (automatic, from ${base})`.slice(0, 200);
}

/**
 * Creates the proven mapping for the organization. A statement of the same layout that created
 * one first (two uploads at once) wins: its mapping is used, found by header hash.
 */
async function createProven(
  ctx: AutoMapContext,
  suggestion: MappingSuggestion,
  fields: MappingFields,
  record: AutoMapRecord,
): Promise<FoundMapping | null> {
  const actor = { userId: ctx.statement.created_by, apiKey: null } as {
    userId: string;
    apiKey: null;
  };
  try {
    const mapping = await withTransaction(ctx.deps.pool, (db) =>
      createMapping(db, actor, ctx.organizationId, {
        name: mappingName(suggestion, ctx.statement.file_name),
        headers: ctx.located.header,
        fields,
        distributorId: null,
        fileCategories: null,
      }),
    );
    const match: MappingMatch = {
      by: 'automatic',
      source: 'organization',
      mappingId: mapping.id,
      libraryKey: null,
      revision: mapping.revision,
      automatic: record,
    };
    return { mapping, match };
  } catch (error) {
    if (error instanceof AppError && error.errorCode === 'MAPPING_HEADER_HASH_TAKEN')
      return findMappingForHeader(ctx.deps.pool, ctx.organizationId, ctx.located.header);
    throw error;
  }
}

/** A proven organization mapping for the statement, or the suggestion it waits with and why. */
export async function autoMapStatement(ctx: AutoMapContext): Promise<AutoMapOutcome> {
  const suggestion = suggestMapping(
    ctx.located.header,
    ctx.located.sampleRows,
    ctx.statement.file_name,
  );
  const facts = statementFacts(ctx.located.preambleValues, ctx.statement.file_name);
  const waiting = (reasons: AutoMapReason[]): AutoMapOutcome => ({
    suggestion: { ...suggestion, automatic: { applied: false, reasons, facts } },
  });
  const draft = draftAutoMapping(suggestion, ctx.located, facts);
  if (draft.reasons.length > 0) return waiting(draft.reasons);
  const proof = await normalizeDraft(ctx, draft, facts);
  if ('code' in proof) return waiting([proof]);
  if (proof.reasons.length > 0) return waiting(proof.reasons);
  const record: AutoMapRecord = {
    basis: draft.basis,
    leftOut: draft.leftOut,
    facts,
    proof: { rows: proof.rows, net: proof.net, units: proof.units, totals: proof.totals },
  };
  const found = await createProven(ctx, suggestion, draft.fields, record);
  return found
    ? { found }
    : waiting([
        {
          code: 'field_ambiguous',
          message: 'Another mapping of this layout was created meanwhile and does not fit it.',
        },
      ]);
}

/** The `auto_mapped` flag of a statement processed with the mapping its own run created. */
export function autoMappedFlags(match: MappingMatch, mappingName: string) {
  if (match.by !== 'automatic' || !match.automatic) return [];
  return [
    {
      kind: 'auto_mapped',
      severity: 'info' as const,
      message: `No mapping knew this layout: the mapping "${mappingName}" was created from it and proven (every required field found, every row read${match.automatic.proof.totals.length > 0 ? ', the stated totals equal' : ''}). Check it, and edit it like any other.`,
      details: {
        mappingId: match.mappingId,
        mappingName,
        revision: match.revision,
        ...match.automatic,
      },
    },
  ];
}
