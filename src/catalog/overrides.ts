// User corrections of musical details: never written over the data, always a new override row
// with who and when (docs/catalog.md), plus an activity entry per musical detail for
// updateResults, and per block and request for bulkOverride and ignoreTitles.
import { z } from 'zod';
import { recordActivity } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import type { Queryable } from '../db/pool.ts';
import { AppError } from '../errors.ts';
import { normalizedTitleKey } from './identity.ts';
import {
  blockIdsOfRightsholder,
  blocksWithRightsholders,
  holdRightsholdersOfBlocks,
  rightsholderIdsOfBlocks,
  visibleBlock,
} from './blockStore.ts';
import { visibleDetails } from './musicalDetailStore.ts';
import type { Caller, MusicalDetailRecord, OverrideValues } from './musicalDetails.ts';
import {
  detailIdsOfRule,
  insertCatalogRule,
  insertDetailOverrides,
  insertIgnoredTitle,
  markTitlesIgnored,
  type DetailOverrideKind,
} from './overrideStore.ts';
import { parseCatalogQuery } from './query.ts';
import { applyRules } from './rules.ts';

const noNul = (s: string) => !s.includes('\u0000');
const value = (max = 500) =>
  z.string().trim().max(max).refine(noNul, 'must not contain NUL characters');
/** A release date as precise as it is known: YYYY, YYYY-MM or a real calendar day YYYY-MM-DD; '' clears it. */
export const releaseDate = z
  .union([z.string().regex(/^\d{4}(-(0[1-9]|1[0-2]))?$/), z.iso.date()], {
    error: 'must be YYYY, YYYY-MM or a real day YYYY-MM-DD',
  })
  .refine((s) => !s.startsWith('0000'), 'the year must be 0001 or later')
  .or(z.literal(''));
/** An image link a browser may open: http(s) only (no javascript:, data: or file: links). */
export const imageUrl = z
  .url({ protocol: /^https?$/, error: 'must be an http(s) URL' })
  .max(2_000)
  .or(z.literal(''));
const names = z.array(value(300)).max(100);

/** Every field optional: bulkOverride sets some; updateResults requires title, artist and releaseDate. */
export const overrideValuesShape = {
  title: value(),
  artist: value(),
  releaseDate,
  imageUrl,
  genres: names,
  albums: names,
  songWriters: names,
  fetchedComposers: z
    .array(
      z.record(
        z.string().max(100),
        z.union([z.string().max(500), z.number(), z.boolean(), z.null()]),
      ),
    )
    .max(100),
};
export const partialOverrideValues = z
  .strictObject(
    Object.fromEntries(Object.entries(overrideValuesShape).map(([k, s]) => [k, s.optional()])) as {
      [K in keyof typeof overrideValuesShape]: z.ZodOptional<(typeof overrideValuesShape)[K]>;
    },
  )
  .refine((v) => Object.values(v).some((x) => x !== undefined), 'at least one value');

/** An empty string clears a text field to null (the correction "there is none"). */
function storedValues(values: OverrideValues): OverrideValues {
  const out: OverrideValues = {};
  for (const [k, v] of Object.entries(values)) {
    if (v === undefined) continue;
    out[k as keyof OverrideValues] = v === '' && k !== 'title' ? null : v;
  }
  return out;
}

/**
 * Holds the rightsholders of these blocks (KEY SHARE) for the rest of the transaction, so a
 * rightsholder.deleteById, which locks its rightsholder before removing the block under it, waits
 * for the overrides about to be written instead of removing the block between the check and the
 * insert (a foreign-key violation, an internal error). `errorCode` when a block is already gone.
 */
async function holdBlocks(
  db: Queryable,
  organizationId: string,
  blockIds: readonly string[],
  errorCode: 'MUSICAL_DETAIL_NOT_FOUND' | 'BLOCK_NOT_FOUND',
): Promise<void> {
  const unique = [...new Set(blockIds)];
  const held = await holdRightsholdersOfBlocks(db, organizationId, unique);
  if (held.length !== unique.length)
    throw new AppError(errorCode, 'Removed with its rightsholder while this change waited');
}

/** Overrides of one request, per block: recorded as one event each (recordTally). */
type OverrideTally = Map<
  string,
  { musicalDetails: number; items: { musicalDetails: number; values: OverrideValues }[] }
>;

/**
 * Inserts an override of each musical detail. With `tally` the activity is counted there, per
 * block, for one summarizing event per block (recordTally); without it, an event per detail.
 */
async function insertOverrides(
  db: Queryable,
  principal: Principal,
  organizationId: string,
  mds: readonly Pick<MusicalDetailRecord, 'id' | 'blockId' | 'identityKey' | 'title'>[],
  kind: DetailOverrideKind,
  values: OverrideValues,
  action: string,
  tally?: OverrideTally,
): Promise<void> {
  if (mds.length === 0) return;
  // ignoreTitles's own UPDATE of the details already holds them against the delete (which removes
  // the details before their block); taking the rightsholders after it could deadlock with it
  if (kind !== 'ignore')
    await holdBlocks(
      db,
      organizationId,
      mds.map((m) => m.blockId),
      'MUSICAL_DETAIL_NOT_FOUND',
    );
  await insertDetailOverrides(db, {
    organizationId,
    kind,
    values,
    createdBy: principal.userId,
    musicalDetails: mds,
  });
  if (tally) {
    const perBlock = new Map<string, number>();
    for (const md of mds) perBlock.set(md.blockId, (perBlock.get(md.blockId) ?? 0) + 1);
    for (const [blockId, n] of perBlock) {
      const entry = tally.get(blockId) ?? { musicalDetails: 0, items: [] };
      entry.musicalDetails += n;
      entry.items.push({ musicalDetails: n, values });
      tally.set(blockId, entry);
    }
    return;
  }
  // the event is about the musical detail's rightsholder (its block's): a member restricted to it
  // sees the event (the subject id is no product's, so the activity log could not find it)
  const rightsholderOf = await rightsholderIdsOfBlocks(db, [...new Set(mds.map((m) => m.blockId))]);
  for (const md of mds) {
    const rightsholder = rightsholderOf.get(md.blockId);
    await recordActivity(db, principal, {
      organizationId,
      action,
      subjectType: 'product',
      subjectId: md.id,
      subjectLabel: md.title,
      rightsholderIds: rightsholder ? [rightsholder] : [],
      changes: Object.fromEntries(
        Object.entries(values).map(([k, v]) => [k, { before: null, after: v }]),
      ),
    });
  }
}

/**
 * One event per block of the tally, about the block's rightsholder: the number of musical details
 * overridden and, per item of the request, how many with which values. A request may override
 * 100 × 5,000 details; an event for each would flood the log (the overrides themselves keep who
 * and when per detail).
 */
async function recordTally(
  db: Queryable,
  principal: Principal,
  organizationId: string,
  action: string,
  tally: OverrideTally,
): Promise<void> {
  if (tally.size === 0) return;
  for (const block of await blocksWithRightsholders(db, organizationId, [...tally.keys()])) {
    const { musicalDetails, items } = tally.get(block.id)!;
    await recordActivity(db, principal, {
      organizationId,
      action,
      subjectType: 'rightsholder',
      subjectId: block.rightsholderId,
      subjectLabel: block.rightsholderName,
      rightsholderIds: [block.rightsholderId],
      changes: { overrides: { before: null, after: { blockId: block.id, musicalDetails, items } } },
    });
  }
}

export async function updateResults(
  db: Queryable,
  principal: Principal,
  caller: Caller,
  ids: readonly string[],
  values: OverrideValues,
): Promise<string[]> {
  const mds = await visibleDetails(db, caller, ids);
  await insertOverrides(
    db,
    principal,
    caller.organizationId,
    mds,
    'update_results',
    storedValues(values),
    'musicalDetails.updateResults',
  );
  return mds.map((m) => m.id);
}

export interface BulkOverrideItem {
  musicalDetailIds?: string[] | undefined;
  query?: unknown;
  scope?: 'block' | 'rightsholder' | undefined;
  values: OverrideValues;
}

/**
 * Each item either names musical details (one override each) or gives a query: a rule scoped to
 * the block (default) or to the block's rightsholder, applied now and after every refresh.
 */
export async function bulkOverride(
  db: Queryable,
  principal: Principal,
  caller: Caller,
  blockId: string | undefined,
  items: readonly BulkOverrideItem[],
): Promise<{ overrides: number; rules: string[]; musicalDetailIds: string[] }> {
  const { organizationId } = caller;
  const block = blockId ? await visibleBlock(db, caller, blockId) : undefined;
  let overrides = 0;
  const rules: string[] = [];
  const touched = new Set<string>();
  const tally: OverrideTally = new Map();
  for (const [i, item] of items.entries()) {
    const values = storedValues(item.values);
    if (item.musicalDetailIds && item.musicalDetailIds.length > 0) {
      const mds = await visibleDetails(db, caller, item.musicalDetailIds, block?.id);
      await insertOverrides(
        db,
        principal,
        organizationId,
        mds,
        'bulk_override',
        values,
        'musicalDetails.bulkOverride',
        tally,
      );
      overrides += mds.length;
      for (const m of mds) touched.add(m.id);
      continue;
    }
    if (!block)
      throw new AppError('VALIDATION_FAILED', `overrides.${i}: a query override needs blockId`, {
        details: { fields: [{ path: 'blockId', message: 'required with a query' }] },
      });
    const query = parseCatalogQuery(item.query);
    await holdBlocks(db, organizationId, [block.id], 'BLOCK_NOT_FOUND');
    const scope = item.scope ?? 'block';
    const ruleId = await insertCatalogRule(db, {
      organizationId,
      scope,
      blockId: scope === 'block' ? block.id : null,
      rightsholderId: scope === 'rightsholder' ? block.rightsholderId : null,
      query,
      values,
      createdBy: principal.userId,
    });
    rules.push(ruleId);
    const blocks =
      scope === 'block'
        ? [block.id]
        : await blockIdsOfRightsholder(db, organizationId, block.rightsholderId);
    for (const b of blocks) overrides += await applyRules(db, organizationId, b, ruleId);
    const applied = await detailIdsOfRule(db, ruleId);
    for (const id of applied) touched.add(id);
    await recordActivity(db, principal, {
      organizationId,
      action: 'musicalDetails.bulkOverride',
      subjectType: 'rightsholder',
      subjectId: block.rightsholderId,
      subjectLabel: block.rightsholderName,
      changes: {
        rule: {
          before: null,
          after: { id: ruleId, scope, query, values, musicalDetails: applied.length },
        },
      },
    });
  }
  await recordTally(db, principal, organizationId, 'musicalDetails.bulkOverride', tally);
  return { overrides, rules, musicalDetailIds: [...touched] };
}

/**
 * Titles the organization excludes from enrichment. Musical details with such a title (after
 * normalization) are marked ignored; those not yet resolved become skipped.
 */
export async function ignoreTitles(
  db: Queryable,
  principal: Principal,
  caller: Caller,
  titles: readonly string[],
): Promise<{
  titles: { title: string; normalizedTitle: string; created: boolean }[];
  musicalDetails: number;
  blockIds: string[];
}> {
  const { organizationId } = caller;
  const out: { title: string; normalizedTitle: string; created: boolean }[] = [];
  const seen = new Set<string>();
  for (const title of titles) {
    const normalized = normalizedTitleKey(title);
    if (!normalized)
      throw new AppError('VALIDATION_FAILED', `The title "${title}" has no letters or digits`, {
        details: { fields: [{ path: 'titles', message: 'a title needs letters or digits' }] },
      });
    if (seen.has(normalized)) continue;
    seen.add(normalized);
    const created = await insertIgnoredTitle(db, {
      organizationId,
      title: title.trim(),
      normalizedTitle: normalized,
      createdBy: principal.userId,
    });
    out.push({ title: title.trim(), normalizedTitle: normalized, created });
  }
  const rows = await markTitlesIgnored(db, caller, [...seen]);
  // organization-wide: one event per block, as bulkOverride, not one per detail
  const tally: OverrideTally = new Map();
  await insertOverrides(
    db,
    principal,
    organizationId,
    rows,
    'ignore',
    { ignored: true } as OverrideValues,
    'musicalDetails.ignoreTitles',
    tally,
  );
  await recordTally(db, principal, organizationId, 'musicalDetails.ignoreTitles', tally);
  return {
    titles: out,
    musicalDetails: rows.length,
    blockIds: [...new Set(rows.map((r) => r.blockId))],
  };
}
