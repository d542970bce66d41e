// Blocks and their musical details. A block is the catalog of one rightsholder; a refresh rebuilds
// its musical details from the normalized rows of the rightsholder's processed statements. The
// result depends only on those statements, so a retried or duplicated refresh changes nothing.
import type { QueryResult } from 'pg';
import type { Queryable } from '../db/pool.ts';
import { withTransaction } from '../db/pool.ts';
import type { Deps } from '../deps.ts';
import { lockBlock } from './blockStore.ts';
import { afterBlockRefresh } from './followUps.ts';
import { identityKey, legacyIdentityKey, normalizedTitleKey } from './identity.ts';
import { applyRules } from './rules.ts';
import { readSpellings, type SpellingRow } from './statementRows.ts';
import { withRows } from '../ingest/statements.ts';
import { enqueue } from '../jobs/enqueue.ts';
import { TASK } from '../jobs/payloads.ts';

export const BLOCK_REFRESH_TASK = TASK.catalog_block_refresh;

/** Statements that change within this window are folded into one refresh. */
const REFRESH_DELAY_SECONDS = 1;
/** graphile-worker's largest priority (a smallint; lower runs first): after any statement waiting */
const REFRESH_PRIORITY = 32_767;
const MAX_TEXT = 1_000;

/**
 * How a title's letter case ranks among spellings with as many rows: a mixed-case one (or one without
 * cased letters) first, then all lower case, then all capitals ('Love Song', 'love song', 'LOVE SONG').
 */
export function caseRank(title: string | null): number {
  if (!title) return 0;
  const upper = title === title.toUpperCase();
  const lower = title === title.toLowerCase();
  return upper === lower ? 0 : lower ? 1 : 2;
}

/**
 * Queues a refresh of the blocks of these rightsholders, inside the caller's transaction when
 * `db` is one (the refresh is queued if and only if the change commits). The job key per
 * rightsholder coalesces a burst into one job; the queue per rightsholder keeps two refreshes
 * of one block from running at once. Its priority puts it after every statement waiting to be
 * processed (theirs is the number waiting before them, below it), and the job itself waits while
 * statements of the rightsholder are queued or processed (src/jobs/tasks/catalog_block_refresh.ts): one
 * refresh per burst, which does not take a job slot or a core from the burst's statements.
 * `later`: a refresh waiting since `waitingSince`, queued again `inSeconds` from now.
 */
export async function enqueueBlockRefresh(
  db: Queryable,
  organizationId: string,
  rightsholderIds: readonly string[],
  reason: string,
  later?: { inSeconds: number; waitingSince: number },
): Promise<void> {
  for (const rightsholderId of new Set(rightsholderIds)) {
    const key = `${BLOCK_REFRESH_TASK}:${rightsholderId}`;
    await enqueue(
      db,
      TASK.catalog_block_refresh,
      {
        organizationId,
        rightsholderId,
        reason,
        ...(later ? { waitingSince: later.waitingSince } : {}),
      },
      {
        queueName: key,
        runInSeconds: later?.inSeconds ?? REFRESH_DELAY_SECONDS,
        maxAttempts: 5,
        jobKey: key,
        jobKeyMode: 'replace',
        priority: REFRESH_PRIORITY,
      },
    );
  }
}

/** Queues the refresh of the blocks the given statements belong to. */
export async function enqueueBlockRefreshForStatements(
  db: Queryable,
  organizationId: string,
  statementIds: readonly string[],
  reason: string,
): Promise<void> {
  if (statementIds.length === 0) return;
  const { rows } = await db.query<{ rightsholder_id: string }>(
    'SELECT DISTINCT rightsholder_id FROM statements WHERE organization_id = $1 AND id = ANY ($2::uuid[])',
    [organizationId, statementIds],
  );
  await enqueueBlockRefresh(
    db,
    organizationId,
    rows.map((r) => r.rightsholder_id),
    reason,
  );
}

/** The block of a rightsholder, created on first use. */
export async function ensureBlock(
  db: Queryable,
  organizationId: string,
  rightsholderId: string,
): Promise<string> {
  const { rows } = await db.query<{ id: string }>(
    `INSERT INTO catalog_blocks (organization_id, rightsholder_id) VALUES ($1, $2)
     ON CONFLICT (rightsholder_id) DO UPDATE SET updated_at = catalog_blocks.updated_at
     RETURNING id`,
    [organizationId, rightsholderId],
  );
  return rows[0]!.id;
}

export interface BlockRefreshResult {
  blockId: string;
  statements: number;
  musicalDetails: number;
  added: number;
  removed: number;
}

export async function refreshBlock(
  deps: Deps,
  organizationId: string,
  rightsholderId: string,
): Promise<BlockRefreshResult | null> {
  const exists = await deps.pool.query(
    'SELECT 1 FROM rightsholders WHERE id = $1 AND organization_id = $2',
    [rightsholderId, organizationId],
  );
  if (!exists.rowCount) return null;
  const blockId = await ensureBlock(deps.pool, organizationId, rightsholderId);
  await deps.pool.query(
    `UPDATE catalog_blocks SET state = 'refreshing', updated_at = clock_timestamp() WHERE id = $1`,
    [blockId],
  );
  try {
    const result = await rebuild(deps, organizationId, rightsholderId, blockId);
    await afterBlockRefresh(deps, blockId);
    return result;
  } catch (error) {
    await deps.pool.query(
      `UPDATE catalog_blocks SET state = 'failed', last_error = $2, updated_at = clock_timestamp() WHERE id = $1`,
      [blockId, String((error as Error).message).slice(0, 1000)],
    );
    throw error;
  }
}

/** The block's spellings as columns of md_in, one entry per spelling that names a track. */
interface SpellingColumns {
  key: string[];
  normTitle: string[];
  statement: string[];
  currency: (string | null)[];
  isrc: (string | null)[];
  isrcRaw: (string | null)[];
  title: (string | null)[];
  artist: (string | null)[];
  releaseTitle: (string | null)[];
  releaseArtist: (string | null)[];
  rows: number[];
  earnings: (string | null)[];
  amountRows: number[];
  caseRank: number[];
}

type SourceStatementRow = { id: string; normalized_key: string; normalized_version: number };

async function rebuild(
  deps: Deps,
  organizationId: string,
  rightsholderId: string,
  blockId: string,
): Promise<BlockRefreshResult> {
  const { rows: statements } = await deps.pool.query<SourceStatementRow>(
    `SELECT id, normalized_key, normalized_version FROM statements
     WHERE organization_id = $1 AND rightsholder_id = $2 AND ${withRows()}
     ORDER BY id`,
    [organizationId, rightsholderId],
  );
  const spellings = await readSpellings(
    deps,
    organizationId,
    rightsholderId,
    statements.map((s) => ({ id: s.id })),
  );
  const { cols, rekeys } = spellingColumns(spellings);

  return withTransaction(deps.pool, async (db) => {
    // one refresh of a block at a time, whatever runs it
    await lockBlock(db, blockId);
    await rekeyLegacyIdentities(db, organizationId, blockId, rekeys);
    await loadSpellingsTable(db, cols);
    const upsert = await upsertMusicalDetails(db, organizationId, blockId);
    const removed = await db.query(
      `DELETE FROM musical_details md WHERE md.block_id = $1 AND NOT EXISTS (SELECT 1 FROM md_in m WHERE m.identity_key = md.identity_key)`,
      [blockId],
    );
    // corrections of identities that are back
    await db.query(
      `UPDATE musical_detail_overrides o SET musical_detail_id = md.id FROM musical_details md
       WHERE o.block_id = $1 AND o.musical_detail_id IS NULL AND md.block_id = o.block_id AND md.identity_key = o.identity_key`,
      [blockId],
    );
    await db.query(
      `UPDATE cluster_assignment_overrides o SET musical_detail_id = md.id FROM musical_details md
       WHERE o.block_id = $1 AND o.musical_detail_id IS NULL AND md.block_id = o.block_id AND md.identity_key = o.identity_key`,
      [blockId],
    );
    await applyRules(db, organizationId, blockId);
    await db.query(
      `UPDATE catalog_blocks SET state = 'idle', last_error = NULL, refreshed_at = clock_timestamp(), updated_at = clock_timestamp(),
         progress_done = $2, progress_total = $2, source_versions = $3
       WHERE id = $1`,
      [
        blockId,
        statements.length,
        JSON.stringify(Object.fromEntries(statements.map((s) => [s.id, s.normalized_version]))),
      ],
    );
    return {
      blockId,
      statements: statements.length,
      musicalDetails: upsert.rowCount ?? 0,
      added: upsert.rows.filter((r) => r.inserted).length,
      removed: removed.rowCount ?? 0,
    };
  });
}

/**
 * The spellings as columns, and the legacy re-keys: identity keys stored under the earlier
 * normalization (apostrophes and format characters were spaces), each one that now stands for
 * exactly one other key, re-keyed before the upsert.
 */
function spellingColumns(spellings: readonly SpellingRow[]): {
  cols: SpellingColumns;
  rekeys: (readonly [string, string])[];
} {
  const cols: SpellingColumns = {
    ...{ key: [], normTitle: [], statement: [], currency: [], isrc: [], isrcRaw: [], title: [] },
    ...{ artist: [], releaseTitle: [], releaseArtist: [], rows: [], earnings: [] },
    ...{ amountRows: [], caseRank: [] },
  };
  const legacyTargets = new Map<string, Set<string>>();
  const clip = (s: string | null) => (s === null ? null : s.trim().slice(0, MAX_TEXT) || null);
  for (const s of spellings) {
    const key = identityKey(s);
    if (!key) continue; // a row naming no track (no ISRC, no title) is not a musical detail
    const legacy = legacyIdentityKey(s);
    if (legacy !== null && legacy !== key)
      legacyTargets.set(legacy, (legacyTargets.get(legacy) ?? new Set()).add(key));
    cols.key.push(key);
    cols.normTitle.push(normalizedTitleKey(s.title));
    cols.statement.push(s.statementId);
    cols.currency.push(s.currency);
    cols.isrc.push(s.isrc);
    cols.isrcRaw.push(clip(s.isrcRaw));
    cols.title.push(clip(s.title));
    cols.artist.push(clip(s.artist));
    cols.releaseTitle.push(clip(s.releaseTitle));
    cols.releaseArtist.push(clip(s.releaseArtist));
    cols.rows.push(s.rows);
    cols.earnings.push(s.earnings);
    cols.amountRows.push(s.amountRows);
    // the title's case first, then the artist's
    cols.caseRank.push(caseRank(clip(s.title)) * 3 + caseRank(clip(s.artist)));
  }
  const currentKeys = new Set(cols.key);
  const rekeys = [...legacyTargets]
    .filter(([legacy, targets]) => targets.size === 1 && !currentKeys.has(legacy))
    .map(([legacy, targets]) => [legacy, [...targets][0]!] as const)
    .sort(([a], [b]) => (a < b ? -1 : 1));
  return { cols, rekeys };
}

/** The spellings into the transaction's temporary table md_in, in chunks. */
async function loadSpellingsTable(db: Queryable, cols: SpellingColumns): Promise<void> {
  await db.query(
    `CREATE TEMP TABLE md_in (identity_key text, norm_title text, statement_id uuid, currency text, isrc text, isrc_raw text,
       title text, artist text, release_title text, release_artist text, row_count bigint, earnings numeric, amount_rows bigint, case_rank smallint) ON COMMIT DROP`,
  );
  const CHUNK = 5_000;
  for (let i = 0; i < cols.key.length; i += CHUNK) {
    const part = (a: unknown[]) => a.slice(i, i + CHUNK);
    await db.query(
      `INSERT INTO md_in SELECT * FROM unnest($1::text[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[],
         $9::text[], $10::text[], $11::bigint[], $12::numeric[], $13::bigint[], $14::smallint[])`,
      [
        part(cols.key),
        part(cols.normTitle),
        part(cols.statement),
        part(cols.currency),
        part(cols.isrc),
        part(cols.isrcRaw),
        part(cols.title),
        part(cols.artist),
        part(cols.releaseTitle),
        part(cols.releaseArtist),
        part(cols.rows),
        part(cols.earnings),
        part(cols.amountRows),
        part(cols.caseRank),
      ],
    );
  }
}

/**
 * md_in's identities upserted as musical details. USD as analytics_full_view: each statement's
 * rate for the row's currency, at the 18 decimals of the analytics rate (analytics/model.ts,
 * usdSum: its sums are these, rounded to 26 decimals); rows in a currency without a rate are
 * counted, never converted at 1.
 */
function upsertMusicalDetails(
  db: Queryable,
  organizationId: string,
  blockId: string,
): Promise<QueryResult<{ inserted: boolean }>> {
  return db.query<{ inserted: boolean }>(
    `WITH converted AS (
       SELECT m.*, m.earnings * round(x.rate, 18) AS usd, CASE WHEN x.rate IS NULL THEN m.amount_rows ELSE 0 END AS no_rate
       FROM md_in m LEFT JOIN statement_fx x ON x.statement_id = m.statement_id AND x.currency = m.currency
     ), spelling AS (
       SELECT identity_key, norm_title, isrc, isrc_raw, title, artist, release_title, release_artist, case_rank,
              sum(row_count) AS row_count, sum(usd) AS usd, sum(no_rate) AS no_rate
       FROM converted GROUP BY 1, 2, 3, 4, 5, 6, 7, 8, 9
     ), ranked AS (
       SELECT s.*, row_number() OVER (PARTITION BY identity_key ORDER BY row_count DESC, case_rank,
                title COLLATE "C" NULLS LAST, artist COLLATE "C" NULLS LAST, release_title COLLATE "C" NULLS LAST,
                release_artist COLLATE "C" NULLS LAST, isrc_raw COLLATE "C" NULLS LAST) AS rank
       FROM spelling s
     ), identity AS (
       SELECT identity_key,
              max(isrc) AS isrc,
              sum(row_count) AS row_count,
              coalesce(trim_scale(sum(usd)), 0) AS earnings_usd,
              sum(no_rate) AS no_rate,
              jsonb_agg(jsonb_build_object('isrc', isrc_raw, 'title', title, 'artist', artist, 'releaseTitle', release_title,
                'releaseArtist', release_artist, 'rowCount', row_count, 'earningsUsd', usd_answer(usd)::text) ORDER BY rank) AS variants
       FROM ranked GROUP BY identity_key
     )
     INSERT INTO musical_details AS md (organization_id, block_id, identity_key, isrc, title, normalized_title, artist, release_title, release_artist,
       variants, row_count, earnings_usd, rows_without_rate, state, ignored)
     SELECT $1, $2, i.identity_key, i.isrc, coalesce(r.title, ''), r.norm_title, r.artist, r.release_title, r.release_artist,
            i.variants, i.row_count, i.earnings_usd, i.no_rate,
            CASE WHEN ig.id IS NULL THEN 'pending' ELSE 'skipped' END, ig.id IS NOT NULL
     FROM identity i
     JOIN ranked r ON r.identity_key = i.identity_key AND r.rank = 1
     LEFT JOIN ignored_titles ig ON ig.organization_id = $1 AND ig.normalized_title = r.norm_title
     ON CONFLICT (block_id, identity_key) DO UPDATE SET
       isrc = EXCLUDED.isrc, title = EXCLUDED.title, normalized_title = EXCLUDED.normalized_title, artist = EXCLUDED.artist, release_title = EXCLUDED.release_title,
       release_artist = EXCLUDED.release_artist, variants = EXCLUDED.variants, row_count = EXCLUDED.row_count,
       earnings_usd = EXCLUDED.earnings_usd, rows_without_rate = EXCLUDED.rows_without_rate,
       updated_at = CASE WHEN (md.variants, md.row_count, md.earnings_usd, md.rows_without_rate)
                            IS DISTINCT FROM (EXCLUDED.variants, EXCLUDED.row_count, EXCLUDED.earnings_usd, EXCLUDED.rows_without_rate)
                         THEN clock_timestamp() ELSE md.updated_at END
     RETURNING (xmax = 0) AS inserted`,
    [organizationId, blockId],
  );
}

/**
 * Moves what a block stored under identity keys of the earlier normalization to the current keys
 * (docs/catalog.md): the musical detail itself (its id, fetch state and result, cluster and links
 * kept; the first of several earlier keys of one identity), its corrections and cluster moves, the
 * users' product links naming it, and the organization's ignored titles. Rule overrides are
 * dropped and written again by the rules. Inside the refresh's transaction, the block locked.
 */
async function rekeyLegacyIdentities(
  db: Queryable,
  organizationId: string,
  blockId: string,
  rekeys: readonly (readonly [from: string, to: string])[],
): Promise<void> {
  const { rows: ignored } = await db.query<{ id: string; title: string; normalized_title: string }>(
    'SELECT id, title, normalized_title FROM ignored_titles WHERE organization_id = $1 ORDER BY created_at, id',
    [organizationId],
  );
  const renormalized = ignored.flatMap((r) => {
    const normalized = normalizedTitleKey(r.title);
    return normalized !== r.normalized_title && normalized ? [[r.id, normalized] as const] : [];
  });
  for (const [id, normalized] of renormalized) {
    // a title the organization also ignores in the current form already: the earlier one goes
    const taken = await db.query(
      'SELECT 1 FROM ignored_titles WHERE organization_id = $1 AND normalized_title = $2',
      [organizationId, normalized],
    );
    if (taken.rowCount) await db.query('DELETE FROM ignored_titles WHERE id = $1', [id]);
    else
      await db.query('UPDATE ignored_titles SET normalized_title = $2 WHERE id = $1', [
        id,
        normalized,
      ]);
  }
  if (rekeys.length === 0) return;
  const from = rekeys.map(([f]) => f);
  const to = rekeys.map(([, t]) => t);
  // one musical detail per current key: the first earlier key that has one, when none has the current key
  await db.query(
    `UPDATE musical_details md SET identity_key = m.to_key, updated_at = clock_timestamp()
     FROM (SELECT DISTINCT ON (m.to_key) m.from_key, m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
           JOIN musical_details x ON x.block_id = $1 AND x.identity_key = m.from_key ORDER BY m.to_key, m.from_key) m
     WHERE md.block_id = $1 AND md.identity_key = m.from_key
       AND NOT EXISTS (SELECT 1 FROM musical_details o WHERE o.block_id = $1 AND o.identity_key = m.to_key)`,
    [blockId, from, to],
  );
  await db.query(
    'DELETE FROM musical_detail_overrides WHERE block_id = $1 AND rule_id IS NOT NULL AND identity_key = ANY ($2::text[])',
    [blockId, from],
  );
  for (const table of ['musical_detail_overrides', 'cluster_assignment_overrides']) {
    await db.query(
      `UPDATE ${table} o SET identity_key = m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
       WHERE o.block_id = $1 AND o.identity_key = m.from_key`,
      [blockId, from, to],
    );
  }
  await db.query(
    `UPDATE product_overrides o SET "values" = jsonb_set(o."values", '{identityKey}', to_jsonb(m.to_key))
     FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
     WHERE o.block_id = $1 AND o.kind = 'link' AND o."values"->>'identityKey' = m.from_key`,
    [blockId, from, to],
  );
  // the track of a musical detail without a cluster is keyed by its identity (src/catalog/products.ts)
  await db.query(
    `UPDATE product_overrides o SET product_key = 'track:md:' || m.to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key)
     WHERE o.block_id = $1 AND o.product_key = 'track:md:' || m.from_key`,
    [blockId, from, to],
  );
  await db.query(
    `UPDATE products p SET stable_key = 'track:md:' || m.to_key
     FROM (SELECT DISTINCT ON (to_key) from_key, to_key FROM unnest($2::text[], $3::text[]) AS m(from_key, to_key) ORDER BY to_key, from_key) m
     WHERE p.block_id = $1 AND p.stable_key = 'track:md:' || m.from_key
       AND NOT EXISTS (SELECT 1 FROM products o WHERE o.block_id = $1 AND o.stable_key = 'track:md:' || m.to_key)`,
    [blockId, from, to],
  );
}
