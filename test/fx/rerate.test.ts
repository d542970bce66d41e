// Rates imported after a statement was processed reach it: a currency that had no rate gets one
// (its missing_fx_rate flag goes), one that took an earlier day's rate takes the nearer day's, and
// analytics, the missing-lookup reports and the catalog follow, without the statement being
// processed again.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { importFxRates } from '../../src/fx/import.ts';
import type { Queryable } from '../../src/db/pool.ts';
import { rateStatementAlong, ratedOf } from '../../src/fx/rerate.ts';
import { waitForBlock } from '../catalog/helpers.ts';
import { createRightsholder, insertMapping, putFile, waitForStatement } from '../helpers/ingest.ts';
import { CURRENCY_REPORT_HEADER, currencyReportFields } from '../helpers/sampleMapping.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestHandler } from '../helpers/handler.ts';

/** A statement's rating on its own, as the commit's judging statement runs it (rateStatementAlong). */
async function rateStatement(
  db: Queryable,
  statementId: string,
  currencies: readonly string[],
  wantedDate: string | null,
) {
  const rating = rateStatementAlong(statementId, currencies, wantedDate, 1);
  const { rows } = await db.query<{ rated: Parameters<typeof ratedOf>[0] }>(
    `WITH ${rating.ctes.slice(2)} SELECT ${rating.answer} AS rated`,
    rating.params,
  );
  return ratedOf(rows[0]!.rated, wantedDate);
}

const srv = await startTestHandler(t, { jobs: true });
const pool = srv.deps.pool;
const owner = await newOrganization(srv, 'Late Rates Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Late Rates Artist');
const header = CURRENCY_REPORT_HEADER;
await insertMapping(pool, org, 'Late rates layout', header, currencyReportFields);
const dir = await mkdtemp(path.join(tmpdir(), 'rerate-'));

const statementFx = async (statementId: string) =>
  (
    await pool.query<{ currency: string; rate: string; date: string }>(
      `SELECT currency, rate::text AS rate, to_char(rate_date, 'YYYY-MM-DD') AS date FROM statement_fx WHERE statement_id = $1 ORDER BY currency`,
      [statementId],
    )
  ).rows;

const usdTotal = async () => {
  const res = await owner.client.mutate('cube.query', {
    organizationId: org,
    query: {
      measures: ['analytics_full_view.royalty_earnings_usd'],
      filters: [
        { member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: [artist] },
      ],
    },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return (res.data as any).data[0]['analytics_full_view.royalty_earnings_usd'] as string | null;
};

t.test(
  'a statement processed before its rates were published takes them when they are imported',
  async (t) => {
    // GBP's rate of 2024-08-30 is not published yet: the statement (August, wanted 2024-08-31) takes 2024-08-29's
    await pool.query(`DELETE FROM fx_rates WHERE currency = 'GBP' AND rate_date = '2024-08-30'`);
    const csv = [
      header.join(','),
      '2024-08,Late Radio,Late Play,Song A,1,100,EUR',
      '2024-08,Late Radio,Late Play,Song B,1,100,GBP',
      '2024-08,Late Radio,Late Play,Song C,1,500,RUB',
    ].join('\n');
    const up = await putFile(owner.client, org, artist, 'late.csv', Buffer.from(`${csv}\n`));
    const processed = await waitForStatement(owner.client, org, up.statementId);
    t.equal(processed.status, 'processed');
    t.match(
      processed.flags.filter((f: any) => f.kind === 'missing_fx_rate'),
      [{ details: { currencies: ['RUB'], date: '2024-08-31' } }],
    );
    const before = await statementFx(up.statementId);
    t.same(
      before.map((r) => [r.currency, r.date]),
      [
        ['EUR', '2024-08-30'],
        ['GBP', '2024-08-29'],
      ],
    );
    const gbp29 = before[1]!.rate;
    await waitForBlock(pool, artist, 1);
    t.same(
      (
        await pool.query(
          `SELECT sum(rows_without_rate)::int AS none FROM musical_details m JOIN catalog_blocks b ON b.id = m.block_id WHERE m.organization_id = $1 AND b.rightsholder_id = $2`,
          [org, artist],
        )
      ).rows,
      [{ none: 1 }],
    );
    const version = (
      await pool.query('SELECT normalized_version FROM statements WHERE id = $1', [up.statementId])
    ).rows[0].normalized_version;
    // 100 EUR at 1.1087 + 100 GBP at 2024-08-29's rate; RUB adds nothing
    const expectedBefore = (
      await pool.query(`SELECT trim_scale(100 * 1.1087 + 100 * $1::numeric)::text AS v`, [gbp29])
    ).rows[0].v as string;
    t.equal(Number(await usdTotal()).toFixed(2), Number(expectedBefore).toFixed(2));

    // the day's rates arrive: units per US dollar
    const file = path.join(dir, 'late.csv');
    await writeFile(file, 'date,currency,rate\n2024-08-30,GBP,0.8\n2024-08-30,RUB,90\n');
    const summary = await importFxRates(pool, { file }, 'plain');
    t.equal(summary.statementsRerated, 1);
    t.same(await statementFx(up.statementId), [
      { currency: 'EUR', rate: before[0]!.rate, date: '2024-08-30' },
      { currency: 'GBP', rate: '1.25', date: '2024-08-30' },
      { currency: 'RUB', rate: '0.01111111111111111111', date: '2024-08-30' },
    ]);
    const record = await waitForStatement(owner.client, org, up.statementId);
    t.equal(record.status, 'processed');
    t.same(
      record.flags.filter((f: any) => f.kind === 'missing_fx_rate'),
      [],
      'the flag went',
    );
    // nothing was processed again: the same normalized file
    t.equal(
      (
        await pool.query('SELECT normalized_version FROM statements WHERE id = $1', [
          up.statementId,
        ])
      ).rows[0].normalized_version,
      version,
    );
    // 100 × 1.1087 + 100 × 1.25 + 500 × 0.01111111111111111111 = 241.425555555555555555
    t.equal(Number(await usdTotal()).toFixed(2), '241.43');
    const raw = await pool.query(
      `SELECT kind, usd_amount::text AS usd FROM statement_raw_values WHERE statement_id = $1 ORDER BY kind`,
      [up.statementId],
    );
    t.same(raw.rows, [
      { kind: 'sales_type', usd: '241.425555555555555555' },
      { kind: 'source', usd: '241.425555555555555555' },
    ]);
    // the catalog block is refreshed: its RUB row has a rate now (rates at 18 decimals there, as in analytics)
    await waitForBlock(pool, artist, 1);
    const block = await pool.query(
      `SELECT sum(rows_without_rate)::int AS none, trim_scale(sum(earnings_usd))::text AS usd FROM musical_details m JOIN catalog_blocks b ON b.id = m.block_id WHERE m.organization_id = $1 AND b.rightsholder_id = $2`,
      [org, artist],
    );
    t.same(block.rows, [{ none: 0, usd: '241.4255555555555555' }]);

    // the same rates again change nothing
    t.equal((await importFxRates(pool, { file }, 'plain')).statementsRerated, 0);
    // a corrected rate of the same day replaces the one in use
    await writeFile(file, 'date,currency,rate\n2024-08-30,RUB,100\n');
    t.equal((await importFxRates(pool, { file }, 'plain')).statementsRerated, 1);
    t.same((await statementFx(up.statementId)).at(-1), {
      currency: 'RUB',
      rate: '0.01',
      date: '2024-08-30',
    });
    t.equal(Number(await usdTotal()).toFixed(2), '240.87');
  },
);

t.test('a deleted statement, or one of another status, is left alone', async (t) => {
  const csv = [header.join(','), '2024-08,Late Radio,Late Play,Song D,1,10,SEK'].join('\n');
  await pool.query(`DELETE FROM fx_rates WHERE currency = 'SEK' AND rate_date >= '2024-08-01'`);
  const deleted = await putFile(owner.client, org, artist, 'deleted.csv', Buffer.from(`${csv}\n`));
  t.equal((await waitForStatement(owner.client, org, deleted.statementId)).status, 'processed');
  const kept = (await statementFx(deleted.statementId)).find((r) => r.currency === 'SEK')!;
  t.ok(kept.date < '2024-08-01', 'an earlier rate in use');
  await pool.query('UPDATE statements SET deleted_at = now() WHERE id = $1', [deleted.statementId]);
  const file = path.join(dir, 'sek.csv');
  await writeFile(file, 'date,currency,rate\n2024-08-30,SEK,10\n');
  t.equal((await importFxRates(pool, { file }, 'plain')).statementsRerated, 0);
  t.same(
    (await statementFx(deleted.statementId)).find((r) => r.currency === 'SEK'),
    kept,
  );
});

t.test(
  'a rate more than 14 days older than its day is used but flagged, until a nearer one arrives',
  async (t) => {
    const file = path.join(dir, 'ars.csv');
    await writeFile(file, 'date,currency,rate\n2022-03-01,ARS,100\n');
    await importFxRates(pool, { file }, 'plain');
    const csv = [header.join(','), '2024-08,Late Radio,Late Play,Song E,1,1000,ARS'].join('\n');
    const up = await putFile(owner.client, org, artist, 'ars.csv', Buffer.from(`${csv}\n`));
    const processed = await waitForStatement(owner.client, org, up.statementId);
    t.equal(processed.status, 'processed');
    t.same(
      processed.flags
        .filter((f: any) => f.kind.endsWith('_fx_rate'))
        .map((f: any) => [f.kind, f.severity, f.message, f.details]),
      [
        [
          'stale_fx_rate',
          'warning',
          'The latest USD exchange rates on or before 2024-08-31 are more than 14 days older: ARS of 2022-03-01; USD amounts use them.',
          { rates: [{ currency: 'ARS', date: '2022-03-01' }], date: '2024-08-31' },
        ],
      ],
    );
    t.same(await statementFx(up.statementId), [
      { currency: 'ARS', rate: '0.01', date: '2022-03-01' },
    ]);
    // a rate of the 20th is within 14 days of the 31st
    await writeFile(file, 'date,currency,rate\n2024-08-20,ARS,1000\n');
    t.equal((await importFxRates(pool, { file }, 'plain')).statementsRerated, 1);
    t.same(await statementFx(up.statementId), [
      { currency: 'ARS', rate: '0.001', date: '2024-08-20' },
    ]);
    const record = await waitForStatement(owner.client, org, up.statementId);
    t.same(
      record.flags.filter((f: any) => f.kind.endsWith('_fx_rate')),
      [],
    );
  },
);

t.test(
  'a statement in US dollars without any period or sales date still has its USD amounts (rate 1)',
  async (t) => {
    const other = await createRightsholder(owner.client, org, 'No Period Artist');
    const csv = [header.join(','), ',Late Radio,Late Play,Song F,1,12.34,USD'].join('\n');
    const up = await putFile(owner.client, org, other, 'no-period.csv', Buffer.from(`${csv}\n`));
    const processed = await waitForStatement(owner.client, org, up.statementId);
    t.equal(processed.status, 'processed');
    t.same(
      processed.flags.filter((f: any) => f.kind.endsWith('_fx_rate')),
      [],
    );
    t.same(
      (await statementFx(up.statementId)).map((r) => [r.currency, r.rate]),
      [['USD', '1']],
    );
    const res = await owner.client.mutate('cube.query', {
      organizationId: org,
      query: {
        measures: ['analytics_full_view.royalty_earnings_usd'],
        filters: [
          { member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: [other] },
        ],
      },
    });
    t.match(res, {
      ok: true,
      data: { data: [{ 'analytics_full_view.royalty_earnings_usd': '12.34' }] },
    });
  },
);

t.test(
  "rateStatement writes over a statement's rates: a currency it no longer has, or no rate for, goes",
  async (t) => {
    const csv = [
      header.join(','),
      '2024-08,Late Radio,Late Play,Song G,1,10,EUR',
      '2024-08,Late Radio,Late Play,Song H,1,10,GBP',
    ].join('\n');
    const up = await putFile(owner.client, org, artist, 'rewritten.csv', Buffer.from(`${csv}\n`));
    t.equal((await waitForStatement(owner.client, org, up.statementId)).status, 'processed');
    const id = up.statementId;
    const currencies = async () =>
      (
        await pool.query<{ currency: string; date: string }>(
          `SELECT currency, to_char(wanted_date, 'YYYY-MM-DD') AS date FROM statement_currencies WHERE statement_id = $1 ORDER BY currency`,
          [id],
        )
      ).rows
        .map((r) => `${r.currency} ${r.date}`)
        .sort();
    t.same(
      (await statementFx(id)).map((r) => r.currency),
      ['EUR', 'GBP'],
    );
    const eur = (await statementFx(id)).find((r) => r.currency === 'EUR')!;

    // GBP gone, XXX without a rate, usd in lower case at 1 of the day wanted
    t.same(await rateStatement(pool, id, ['usd', 'EUR', 'XXX'], '2024-08-31'), {
      missing: ['XXX'],
      stale: [],
    });
    t.same(
      (await statementFx(id)).sort((a, b) => (a.currency < b.currency ? -1 : 1)),
      [eur, { currency: 'usd', rate: '1', date: '2024-08-31' }],
    );
    t.same(await currencies(), ['EUR 2024-08-31', 'XXX 2024-08-31', 'usd 2024-08-31']);

    // no day wanted: only US dollars have a rate (of today), and no currency is remembered
    t.same(await rateStatement(pool, id, ['EUR', 'USD'], null), { missing: ['EUR'], stale: [] });
    t.same(await statementFx(id), [
      { currency: 'USD', rate: '1', date: new Date().toISOString().slice(0, 10) },
    ]);
    t.same(await currencies(), []);
  },
);
