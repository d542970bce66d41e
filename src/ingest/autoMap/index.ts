// Confident automatic mapping of a layout no mapping knows. The pipeline calls autoMapStatement
// when findMappingForHeader finds nothing: the strict draft (draft.ts) is normalized in the
// normalizer's thread and proven (proof.ts); only a proven draft becomes an organization mapping
// (created like any other: editable, revisioned) that the statement is processed with (the
// proof's rows are the run's: the file is normalized once), its record saying so (MappingMatch
// `by: 'automatic'`, flag `auto_mapped`). Anything short of proof leaves
// the statement in needs_mapping with the suggestion and the reasons. Never a silent guess.
import type { Deps } from '../../deps.ts';
import { withTransaction } from '../../db/pool.ts';
import { AppError } from '../../errors.ts';
import type { LocatedTable } from '../fileTypes.ts';
import { findMappingForHeader, type FoundMapping, type MappingMatch } from '../library.ts';
import { createMapping } from '../mappings.ts';
import type { MappingFields } from '../mappingFields.ts';
import type { NormalizeOutput } from '../normalizeTypes.ts';
import { suggestMapping, type MappingSuggestion } from '../suggest.ts';
import { draftAutoMapping, type Draft } from './draft.ts';
import { statementFacts, type StatementFacts } from './facts.ts';
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
  /**
   * Normalizes the statement with these fields as the run does (src/ingest/pipeline.ts): the rows
   * of a proven draft are the run's own, so that the first file of a layout is read once
   */
  normalize: (fields: MappingFields) => Promise<NormalizeOutput>;
}

/** The suggestion a statement waits in needs_mapping with, and why it was not applied. */
export type AwaitingSuggestion = MappingSuggestion & {
  automatic: { applied: false; reasons: AutoMapReason[]; facts: StatementFacts };
};

/** The mapping found, and when this run created it, the rows its proof normalized (the run's rows). */
export type AutoMapOutcome =
  { found: FoundMapping; normalized?: NormalizeOutput } | { suggestion: AwaitingSuggestion };

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
): Promise<{ proof: Proof; out: NormalizeOutput } | AutoMapReason> {
  const { fields } = draft;
  try {
    const out = await ctx.normalize(fields);
    return { proof: proveMapping(out, ctx.located, fields, draft.basis), out };
  } catch (error) {
    if (error instanceof AppError && DRAFT_ERRORS.has(error.errorCode))
      return {
        code: 'not_readable',
        message: error.message,
        details: { errorCode: error.errorCode },
      };
    throw error;
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
  const proven = await normalizeDraft(ctx, draft);
  if ('code' in proven) return waiting([proven]);
  const { proof } = proven;
  if (proof.reasons.length > 0) return waiting(proof.reasons);
  const record: AutoMapRecord = {
    basis: draft.basis,
    leftOut: draft.leftOut,
    facts,
    proof: { rows: proof.rows, net: proof.net, units: proof.units, totals: proof.totals },
  };
  const found = await createProven(ctx, suggestion, draft.fields, record);
  // the proof's rows are the run's when the mapping is the draft (not another run's of the layout)
  if (found?.match.by === 'automatic') return { found, normalized: proven.out };
  return found
    ? { found }
    : waiting([
        {
          code: 'field_ambiguous',
          message: 'Another mapping of this layout was created meanwhile and does not fit it.',
        },
      ]);
}

/**
 * A statement read again with the automatic mapping its own run created, unedited since (the
 * revision its record names), is still read automatically: its record and `auto_mapped` flag keep
 * naming the mapping, with the basis and proof of that run (the same file, the same mapping).
 * Once the mapping is edited it is the organization's like any other: no flag. Another file of
 * the layout never gets one (its statement created nothing).
 */
export function stillAutomatic(found: FoundMapping, previous: MappingMatch | null): FoundMapping {
  if (
    previous?.by !== 'automatic' ||
    !previous.automatic ||
    previous.mappingId !== found.mapping.id ||
    previous.revision !== found.mapping.revision
  )
    return found;
  return {
    ...found,
    match: { ...found.match, by: 'automatic', automatic: previous.automatic },
  };
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
