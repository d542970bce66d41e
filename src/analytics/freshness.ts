// dataFreshness.* and insights.*: how current the analytics data of some rightsholders is, and
// the exchange-rate defaults for them. Statement facts come from PostgreSQL; row-level facts
// (tracks, currencies, earnings) from the organization's analytics database, brought up to date
// first. Requested rightsholders outside the organization or the caller's data access are left
// out of every answer, as if they did not exist.
import { inRightsholderScope } from '../access/dataAccess.ts';
import type { Queryable } from '../db/pool.ts';
import { usdRate } from '../fx/rates.ts';
import { periodId, periodOf, type Cadence } from '../periods.ts';
import { ParamAllocator, scopePredicate, type Restrictions } from './compile.ts';
import type { AnalyticsEngine, Caller } from './engine.ts';
import { decimalText } from './engine.ts';
import { usdSum } from './model.ts';
import { withRows } from '../ingest/statements.ts';

interface Visible {
  id: string;
  name: string;
}

/** The requested rightsholders the caller may see, in the order asked. */
export async function visibleRightsholders(
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
): Promise<Visible[]> {
  // procedures pass the scope the middleware loaded with the role (src/api/analyticsCaller.ts)
  const scope = caller.rightsholderScope;
  const { rows } = await db.query<Visible>(
    `SELECT id, name FROM rightsholders WHERE organization_id = $1 AND id = ANY($2::uuid[]) AND ${inRightsholderScope('id', '$3')}`,
    [caller.organizationId, [...new Set(ids.map((i) => i.toLowerCase()))], scope],
  );
  const byId = new Map(rows.map((r) => [r.id, r]));
  const out: Visible[] = [];
  for (const id of ids) {
    const r = byId.get(id.toLowerCase());
    if (r && !out.includes(r)) out.push(r);
  }
  return out;
}

interface PeriodRow {
  statement_id: string;
  rightsholder_id: string;
  distributor_id: string | null;
  distributor_name: string | null;
  stmt_year: number | null;
  stmt_period: number | null;
  stmt_cadence: Cadence | null;
  processed_at: Date | null;
}

interface Latest {
  latestPeriod: string | null;
  latestPeriodEnd: string | null;
  latestStatementId: string | null;
  lastIngestedAt: string | null;
  statementCount: number;
}

function latestOf(rows: PeriodRow[]): Latest {
  let best: { end: string; row: PeriodRow } | undefined;
  let lastIngested: Date | null = null;
  for (const r of rows) {
    if (r.processed_at && (!lastIngested || r.processed_at > lastIngested))
      lastIngested = r.processed_at;
    const p =
      r.stmt_year !== null && r.stmt_period !== null && r.stmt_cadence
        ? periodOf(r.stmt_year, r.stmt_period, r.stmt_cadence)
        : null;
    if (!p) continue;
    if (
      !best ||
      p.end > best.end ||
      (p.end === best.end &&
        (r.processed_at?.getTime() ?? 0) > (best.row.processed_at?.getTime() ?? 0))
    )
      best = { end: p.end, row: r };
  }
  return {
    latestPeriod: best
      ? periodId(best.row.stmt_year!, best.row.stmt_period!, best.row.stmt_cadence!)
      : null,
    latestPeriodEnd: best?.end ?? null,
    latestStatementId: best?.row.statement_id ?? null,
    lastIngestedAt: lastIngested?.toISOString() ?? null,
    statementCount: rows.length,
  };
}

async function processedPeriods(
  db: Queryable,
  organizationId: string,
  ids: string[],
): Promise<PeriodRow[]> {
  const { rows } = await db.query<PeriodRow>(
    `SELECT s.id AS statement_id, s.rightsholder_id, s.distributor_id, d.name AS distributor_name, s.stmt_year, s.stmt_period, s.stmt_cadence, s.processed_at
     FROM statements s LEFT JOIN distributors d ON d.id = s.distributor_id
     WHERE s.organization_id = $1 AND s.rightsholder_id = ANY($2::uuid[]) AND ${withRows('s')}`,
    [organizationId, ids],
  );
  return rows;
}

/** Latest statement period per rightsholder and per distributor, and when it was ingested. */
export async function checkEarnings(db: Queryable, caller: Caller, ids: readonly string[]) {
  const visible = await visibleRightsholders(db, caller, ids);
  const rows = await processedPeriods(
    db,
    caller.organizationId,
    visible.map((v) => v.id),
  );
  return {
    rightsholders: visible.map((rh) => {
      const mine = rows.filter((r) => r.rightsholder_id === rh.id);
      const byDistributor = new Map<string | null, PeriodRow[]>();
      for (const r of mine)
        byDistributor.set(r.distributor_id, [...(byDistributor.get(r.distributor_id) ?? []), r]);
      return {
        rightsholderId: rh.id,
        rightsholderName: rh.name,
        ...latestOf(mine),
        distributors: [...byDistributor.entries()]
          .map(([distributorId, list]) => ({
            distributorId,
            distributorName: list[0]!.distributor_name,
            ...latestOf(list),
          }))
          .sort(
            (a, b) =>
              (a.distributorName ?? '').localeCompare(b.distributorName ?? '') ||
              (a.distributorId ?? '').localeCompare(b.distributorId ?? ''),
          ),
      };
    }),
  };
}

function restrictionsFor(caller: Caller, visible: Visible[]): Restrictions {
  return { organizationId: caller.organizationId, rightsholderIds: visible.map((v) => v.id) };
}

/**
 * Catalog coverage per rightsholder. Tracks are counted from the statement rows (an ISRC, else the
 * lower-cased raw title and artist). Once a rightsholder's block has been built (docs/catalog.md),
 * products are its track products and enrichedTracks its musical details found by enrichment
 * (enrichedPercentage: of its musical details, 2 decimals); before that products are the tracks
 * and none is enriched. catalogAvailable: some requested block has been built.
 */
export async function checkProducts(
  engine: AnalyticsEngine,
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
) {
  const visible = await visibleRightsholders(db, caller, ids);
  const facts = await engine.freshFacts(caller.organizationId);
  const p = new ParamAllocator();
  const where = scopePredicate('f', restrictionsFor(caller, visible), p);
  const counts = await facts.withConnection(async (c) =>
    (
      await c.runAndReadAll(
        `SELECT f.rightsholder_id, count(DISTINCT coalesce(f.isrc, lower(f.raw_title) || '|' || lower(coalesce(f.raw_artist, '')))),
           count(DISTINCT f.isrc), count(*) FILTER (WHERE f.isrc IS NULL AND f.raw_title IS NULL)
         FROM facts f WHERE ${where} GROUP BY 1`,
        p.params,
      )
    ).getRows(),
  );
  const byId = new Map(counts.map((r) => [String(r[0]), r]));
  const { rows: blocks } = await db.query<{
    rightsholder_id: string;
    products: number;
    mds: number;
    found: number;
    pct: string;
  }>(
    `SELECT b.rightsholder_id,
       (SELECT count(*)::int FROM products p WHERE p.block_id = b.id AND p.kind = 'track') AS products,
       count(md.id)::int AS mds, count(md.id) FILTER (WHERE md.state = 'found')::int AS found,
       coalesce(trim_scale(round(100.0 * count(md.id) FILTER (WHERE md.state = 'found') / NULLIF(count(md.id), 0), 2)), 0)::text AS pct
     FROM catalog_blocks b LEFT JOIN musical_details md ON md.block_id = b.id
     WHERE b.organization_id = $1 AND b.rightsholder_id = ANY ($2::uuid[]) AND b.refreshed_at IS NOT NULL
     GROUP BY b.id, b.rightsholder_id`,
    [caller.organizationId, visible.map((v) => v.id)],
  );
  const blockOf = new Map(blocks.map((b) => [b.rightsholder_id, b]));
  return {
    catalogAvailable: blocks.length > 0,
    rightsholders: visible.map((rh) => {
      const r = byId.get(rh.id);
      return {
        rightsholderId: rh.id,
        rightsholderName: rh.name,
        tracks: Number(r?.[1] ?? 0),
        tracksWithIsrc: Number(r?.[2] ?? 0),
        rowsWithoutTrack: Number(r?.[3] ?? 0),
        products: blockOf.get(rh.id)?.products ?? Number(r?.[1] ?? 0),
        enrichedTracks: blockOf.get(rh.id)?.found ?? 0,
        enrichedPercentage: blockOf.get(rh.id)?.pct ?? '0',
      };
    }),
  };
}

/** Statements by status, rows, earnings and flags of the rightsholders, together. */
export async function ingestionStats(
  engine: AnalyticsEngine,
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
) {
  const visible = await visibleRightsholders(db, caller, ids);
  const rhIds = visible.map((v) => v.id);
  const [statuses, rowStats, flags] = await Promise.all([
    db.query<{ status: string; n: number }>(
      // a deleted statement is no longer theirs (its rows and flags are left out too); restoring it counts it again
      `SELECT status, count(*) AS n FROM statements WHERE organization_id = $1 AND rightsholder_id = ANY($2::uuid[]) AND deleted_at IS NULL GROUP BY status ORDER BY status`,
      [caller.organizationId, rhIds],
    ),
    db.query<{
      read: string | null;
      kept: string | null;
      removed: string | null;
      last: Date | null;
    }>(
      `SELECT sum(row_count)::text AS read, sum(kept_rows)::text AS kept, sum(removed_rows)::text AS removed, max(processed_at) AS last
       FROM statements WHERE organization_id = $1 AND rightsholder_id = ANY($2::uuid[]) AND ${withRows()}`,
      [caller.organizationId, rhIds],
    ),
    db.query<{ kind: string; severity: string; total: number; unresolved: number }>(
      `SELECT f.kind, f.severity, count(*) AS total, count(*) FILTER (WHERE NOT f.resolved) AS unresolved
       FROM statement_flags f JOIN statements s ON s.id = f.statement_id
       WHERE s.organization_id = $1 AND s.rightsholder_id = ANY($2::uuid[]) AND s.deleted_at IS NULL
       GROUP BY f.kind, f.severity ORDER BY f.kind, f.severity`,
      [caller.organizationId, rhIds],
    ),
  ]);
  const facts = await engine.freshFacts(caller.organizationId);
  const p = new ParamAllocator();
  const where = scopePredicate('f', restrictionsFor(caller, visible), p);
  const earnings = await facts.withConnection(async (c) =>
    (
      await c.runAndReadAll(
        `SELECT f.currency, count(*), sum(f.royalty_earnings), sum(f.gross_royalty_earnings), sum(f.units), ${usdSum('f.royalty_earnings')},
           count(*) FILTER (WHERE fx.rate IS NULL)
         FROM facts f LEFT JOIN fx ON fx.statement_id = f.statement_id AND fx.currency = f.currency
         WHERE ${where} GROUP BY 1 ORDER BY 1 NULLS LAST`,
        p.params,
      )
    ).getRowsJson(),
  );
  const text = (v: unknown) => (v === null || v === undefined ? null : decimalText(String(v)));
  const byStatus = Object.fromEntries(statuses.rows.map((r) => [r.status, r.n]));
  const r = rowStats.rows[0];
  return {
    rightsholderIds: rhIds,
    statements: { total: statuses.rows.reduce((n, s) => n + s.n, 0), byStatus },
    rows: {
      read: Number(r?.read ?? 0),
      kept: Number(r?.kept ?? 0),
      removed: Number(r?.removed ?? 0),
    },
    lastProcessedAt: r?.last?.toISOString() ?? null,
    earnings: earnings.map((e) => ({
      currency: e[0] === null ? null : String(e[0]),
      rows: Number(e[1]),
      royaltyEarnings: text(e[2]),
      grossRoyaltyEarnings: text(e[3]),
      units: text(e[4]),
      royaltyEarningsUsd: text(e[5]),
      rowsWithoutRate: Number(e[6]),
    })),
    flags: {
      total: flags.rows.reduce((n, f) => n + f.total, 0),
      unresolved: flags.rows.reduce((n, f) => n + f.unresolved, 0),
      byKind: flags.rows.map((f) => ({
        kind: f.kind,
        severity: f.severity,
        total: f.total,
        unresolved: f.unresolved,
      })),
    },
  };
}

/** Ready: nothing of the rightsholders is still processing and analytics holds every processed statement. */
export async function isReady(
  engine: AnalyticsEngine,
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
) {
  const visible = await visibleRightsholders(db, caller, ids);
  const rhIds = visible.map((v) => v.id);
  const facts = await engine.freshFacts(caller.organizationId);
  const { rows } = await db.query<{ id: string; status: string; normalized_version: number }>(
    `SELECT id, status, normalized_version FROM statements
     WHERE organization_id = $1 AND rightsholder_id = ANY($2::uuid[]) AND deleted_at IS NULL AND status IN ('uploaded', 'processing', 'processed')`,
    [caller.organizationId, rhIds],
  );
  const loaded = await facts.loadedVersions();
  const processing = rows.filter((s) => s.status !== 'processed').map((s) => s.id);
  const processed = rows.filter((s) => s.status === 'processed');
  const notLoaded = processed
    .filter((s) => loaded.get(s.id) !== s.normalized_version)
    .map((s) => s.id);
  return {
    ready: processing.length === 0 && notLoaded.length === 0,
    rightsholderIds: rhIds,
    processingStatements: processing.length,
    processedStatements: processed.length,
    analyticsStatements: processed.length - notLoaded.length,
    notInAnalytics: notLoaded,
  };
}

/** The last day of the rightsholders' latest statement period, or null when they have none. */
export async function defaultFxDate(
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
): Promise<{ date: string | null; rightsholderIds: string[] }> {
  const visible = await visibleRightsholders(db, caller, ids);
  const rhIds = visible.map((v) => v.id);
  const latest = latestOf(await processedPeriods(db, caller.organizationId, rhIds));
  return { date: latest.latestPeriodEnd, rightsholderIds: rhIds };
}

/** The USD rates at the default date for every currency in the rightsholders' rows. */
export async function defaultFxRates(
  engine: AnalyticsEngine,
  db: Queryable,
  caller: Caller,
  ids: readonly string[],
) {
  const { date, rightsholderIds } = await defaultFxDate(db, caller, ids);
  const facts = await engine.freshFacts(caller.organizationId);
  const p = new ParamAllocator();
  const where = scopePredicate('f', { organizationId: caller.organizationId, rightsholderIds }, p);
  const currencies = await facts.withConnection(async (c) =>
    (
      await c.runAndReadAll(
        `SELECT DISTINCT f.currency FROM facts f WHERE ${where} AND f.currency IS NOT NULL ORDER BY 1`,
        p.params,
      )
    )
      .getRows()
      .map((r) => String(r[0])),
  );
  const rates: { currency: string; rate: string; rateDate: string }[] = [];
  const missing: string[] = [];
  if (date) {
    for (const currency of currencies) {
      const rate = await usdRate(db, currency, date);
      if (rate) rates.push({ currency, rate: decimalText(rate.rate), rateDate: rate.date });
      else missing.push(currency);
    }
  }
  return {
    date,
    base: 'USD' as const,
    rates,
    missing: date ? missing : currencies,
    rightsholderIds,
  };
}
