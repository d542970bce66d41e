// A statement's US-dollar rates. Each currency of a statement gets the rate of the day it is
// wanted for (the statement period's last day, else its last sales day) or of the nearest earlier
// published day, never 1 (statement_fx), and statement_currencies remembers which currencies and
// which day. Ingestion rates a statement when it commits (rateStatementAlong); rates imported later
// reach the statements already processed through rerateStatements, run after every import: a
// currency that had no rate gets one (its missing_fx_rate flag goes), one that took an earlier
// day's rate takes the nearer day's, a corrected rate replaces the old. Analytics reads
// statement_fx at query time and the catalog blocks at their next refresh (queued here), so no
// normalized file is written again. A rate more than STALE_RATE_DAYS older than the day it is
// wanted for (the ECB stopped publishing RUB in 2022) is used but flagged `stale_fx_rate`.
import { enqueueBlockRefreshForStatements } from '../catalog/blocks.ts';
import { withTransaction, type Pool } from '../db/pool.ts';
import { currencyCode, latestRateSql, usdRate } from './rates.ts';

export const MISSING_FX_RATE = 'missing_fx_rate';
export const STALE_FX_RATE = 'stale_fx_rate';
/** A rate older than this before the day it is wanted for is flagged (the ECB's longest gap is a few days). */
export const STALE_RATE_DAYS = 14;

export interface RatedStatement {
  /** currencies without any rate on or before the day */
  missing: string[];
  /** currencies whose rate is older than STALE_RATE_DAYS, with the day it is of */
  stale: { currency: string; date: string }[];
}

export interface FxFlag {
  kind: typeof MISSING_FX_RATE | typeof STALE_FX_RATE;
  severity: 'error' | 'warning';
  message: string;
  details: Record<string, unknown>;
}

export function missingRateMessage(currencies: readonly string[], date: string | null): string {
  return `No USD exchange rate for ${currencies.join(', ')} on or before ${date ?? 'the statement period'}; USD amounts stay empty.`;
}

/** The FX flags a statement's rates call for. */
export function fxFlags(rated: RatedStatement, date: string | null): FxFlag[] {
  const flags: FxFlag[] = [];
  if (rated.missing.length > 0) {
    flags.push({
      kind: MISSING_FX_RATE,
      severity: 'error',
      message: missingRateMessage(rated.missing, date),
      details: { currencies: rated.missing, date },
    });
  }
  if (rated.stale.length > 0) {
    const list = rated.stale.map((r) => `${r.currency} of ${r.date}`).join(', ');
    flags.push({
      kind: STALE_FX_RATE,
      severity: 'warning',
      message: `The latest USD exchange rates on or before ${date} are more than ${STALE_RATE_DAYS} days older: ${list}; USD amounts use them.`,
      details: { rates: rated.stale, date },
    });
  }
  return flags;
}

function isStale(rateDate: string, wanted: string): boolean {
  return (
    Date.parse(`${wanted}T00:00:00Z`) - Date.parse(`${rateDate}T00:00:00Z`) >
    STALE_RATE_DAYS * 86_400_000
  );
}

/**
 * US dollars of a raw value's amounts per currency (`amounts`: [{ currency, amount }] as JSON):
 * each at its currency's rate of the statement, as analytics sums them; an amount in a currency
 * without a rate adds nothing. `$amounts` and `$statement` are the placeholders to use.
 */
export function rawValueUsdSql(amounts: string, statement: string): string {
  return `(SELECT trim_scale(sum(a.amount * x.rate)) FROM jsonb_to_recordset(${amounts}::jsonb) AS a (currency text, amount numeric)
           JOIN statement_fx x ON x.statement_id = ${statement} AND x.currency = a.currency)`;
}

/**
 * One statement's rates (statement_fx) and currencies, as CTEs (`wanted`, `rated`, and the
 * writes): the rows of currencies it no longer has go, the others are written over. Each
 * currency's rate: USD's is 1 (of the day wanted, else today: a statement without a period still
 * has its USD rows' rate); another's is the published one of the day wanted or the nearest
 * earlier day (latestRateSql), none without a day. `$n` placeholders: the statement, its
 * currencies, their codes, the day wanted, today.
 */
function rateStatementCtes(p: (n: 1 | 2 | 3 | 4 | 5) => string): string {
  return `wanted AS (
    SELECT * FROM unnest(${p(2)}::text[], ${p(3)}::text[]) WITH ORDINALITY AS w (currency, code, n)
  ),
  rated AS (
    SELECT w.currency, w.n,
      CASE WHEN w.code = 'USD' THEN '1' ELSE best.rate END AS rate,
      CASE WHEN w.code = 'USD' THEN ${p(5)} ELSE best.date END AS date
    FROM wanted w LEFT JOIN LATERAL (${latestRateSql('w.code', p(4))}) best ON w.code <> 'USD'
  ),
  fx_gone AS (
    DELETE FROM statement_fx WHERE statement_id = ${p(1)}
      AND currency NOT IN (SELECT currency FROM rated WHERE rate IS NOT NULL)
  ),
  fx AS (
    INSERT INTO statement_fx (statement_id, currency, rate, rate_date)
    SELECT ${p(1)}, currency, rate::numeric, date::date FROM rated WHERE rate IS NOT NULL
    ON CONFLICT (statement_id, currency) DO UPDATE SET rate = EXCLUDED.rate, rate_date = EXCLUDED.rate_date
  ),
  currencies_gone AS (
    DELETE FROM statement_currencies WHERE statement_id = ${p(1)}
      AND (${p(4)}::date IS NULL OR currency <> ALL (${p(2)}::text[]))
  ),
  currencies AS (
    INSERT INTO statement_currencies (statement_id, currency, wanted_date)
    SELECT ${p(1)}, currency, ${p(4)}::date FROM wanted WHERE ${p(4)}::date IS NOT NULL
    ON CONFLICT (statement_id, currency) DO UPDATE SET wanted_date = EXCLUDED.wanted_date
  )`;
}

/** A statement's rating as another statement's part (the commit's): see rateStatementAlong. */
export interface RatingAlong {
  /** CTEs, to follow the statement's own: `, wanted AS (...) ...` */
  ctes: string;
  /** an expression of its select list: the currencies' rates and days, as ratedOf reads them */
  answer: string;
  /** their parameters, from the `first` given */
  params: unknown[];
}

/**
 * Writes one statement's rates (statement_fx) and currencies in the statement of another write
 * (one round trip for both), whose own parameters are `$1` to `$(first - 1)`.
 */
export function rateStatementAlong(
  statementId: string,
  currencies: readonly string[],
  wantedDate: string | null,
  first: number,
): RatingAlong {
  return {
    ctes: `, ${rateStatementCtes((n) => `$${first + n - 1}`)}`,
    answer: `(SELECT json_agg(json_build_object('currency', currency, 'rate', rate, 'date', date) ORDER BY n) FROM rated)`,
    params: [
      statementId,
      currencies,
      currencies.map(currencyCode),
      wantedDate,
      wantedDate ?? new Date().toISOString().slice(0, 10),
    ],
  };
}

/** Which currencies have no rate or an old one, from a rating's answer (RatingAlong.answer). */
export function ratedOf(
  answer: { currency: string; rate: string | null; date: string | null }[] | null,
  wantedDate: string | null,
): RatedStatement {
  const rated: RatedStatement = { missing: [], stale: [] };
  for (const { currency, rate, date } of answer ?? []) {
    if (rate === null || date === null) rated.missing.push(currency);
    else if (wantedDate && isStale(date, wantedDate)) rated.stale.push({ currency, date });
  }
  return rated;
}

/** Processed statements whose rates differ from those the published rates now give. */
const STALE_SQL = `SELECT DISTINCT sc.statement_id
  FROM statement_currencies sc
  JOIN statements s ON s.id = sc.statement_id AND s.status = 'processed' AND s.deleted_at IS NULL
  LEFT JOIN statement_fx x ON x.statement_id = sc.statement_id AND x.currency = sc.currency
  CROSS JOIN LATERAL (
    SELECT f.rate_date, f.usd_per_unit FROM fx_rates f
    WHERE f.currency = upper(sc.currency) AND f.rate_date <= sc.wanted_date ORDER BY f.rate_date DESC LIMIT 1
  ) best
  WHERE upper(sc.currency) <> 'USD' AND (x.statement_id IS NULL OR x.rate_date <> best.rate_date OR x.rate <> best.usd_per_unit)
  ORDER BY sc.statement_id`;

/**
 * Brings every processed statement's rates up to date with the published rates; answers how many
 * statements changed. Each statement changes in a transaction of its own, under its row lock, only
 * while it is still processed: a statement being reprocessed takes the rates when its run commits.
 */
export async function rerateStatements(pool: Pool): Promise<number> {
  const { rows } = await pool.query<{ statement_id: string }>(STALE_SQL);
  let changed = 0;
  for (const { statement_id: statementId } of rows) {
    const done = await withTransaction(pool, async (db) => {
      const statement = await db.query<{ organization_id: string }>(
        `SELECT organization_id FROM statements WHERE id = $1 AND status = 'processed' AND deleted_at IS NULL FOR UPDATE`,
        [statementId],
      );
      const organizationId = statement.rows[0]?.organization_id;
      if (!organizationId) return false;
      const wanted = await db.query<{ currency: string; date: string }>(
        `SELECT currency, to_char(wanted_date, 'YYYY-MM-DD') AS date FROM statement_currencies WHERE statement_id = $1 ORDER BY currency`,
        [statementId],
      );
      const rated: RatedStatement = { missing: [], stale: [] };
      for (const { currency, date } of wanted.rows) {
        const rate = await usdRate(db, currency, date);
        if (!rate) {
          rated.missing.push(currency);
          continue;
        }
        if (isStale(rate.date, date)) rated.stale.push({ currency, date: rate.date });
        await db.query(
          `INSERT INTO statement_fx (statement_id, currency, rate, rate_date) VALUES ($1, $2, $3, $4)
           ON CONFLICT (statement_id, currency) DO UPDATE SET rate = EXCLUDED.rate, rate_date = EXCLUDED.rate_date`,
          [statementId, currency, rate.rate, rate.date],
        );
      }
      // the flags say what is still missing or old; one the user resolved stays as they left it
      const date = wanted.rows[0]?.date ?? null;
      const flags = fxFlags(rated, date);
      for (const kind of [MISSING_FX_RATE, STALE_FX_RATE]) {
        const flag = flags.find((f) => f.kind === kind);
        if (!flag) {
          await db.query(
            'DELETE FROM statement_flags WHERE statement_id = $1 AND kind = $2 AND NOT resolved',
            [statementId, kind],
          );
          continue;
        }
        const updated = await db.query(
          'UPDATE statement_flags SET message = $3, details = $4 WHERE statement_id = $1 AND kind = $2 AND NOT resolved',
          [statementId, kind, flag.message, JSON.stringify(flag.details)],
        );
        if (!updated.rowCount) {
          await db.query(
            `INSERT INTO statement_flags (organization_id, statement_id, kind, severity, message, details)
             SELECT $1, $2, $3, $4, $5, $6 WHERE NOT EXISTS (SELECT 1 FROM statement_flags WHERE statement_id = $2 AND kind = $3)`,
            [
              organizationId,
              statementId,
              kind,
              flag.severity,
              flag.message,
              JSON.stringify(flag.details),
            ],
          );
        }
      }
      await db.query(
        `UPDATE statement_raw_values SET usd_amount = ${rawValueUsdSql('amounts', 'statement_id')} WHERE statement_id = $1 AND amounts IS NOT NULL`,
        [statementId],
      );
      await enqueueBlockRefreshForStatements(db, organizationId, [statementId], 'fx_rates');
      return true;
    });
    if (done) changed++;
  }
  return changed;
}
