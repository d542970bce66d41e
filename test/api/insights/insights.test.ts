// insights.getDefaultFxDate and insights.getDefaultFxRates: the end of the rightsholders' latest
// statement period, and the USD rates on that day for the currencies of their rows.
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { QueryName } from '../../helpers/procedures.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Insights Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);

async function get(procedure: QueryName<'insights'>, rightsholderIds: string[]) {
  const res = await owner.client.query(`insights.${procedure}`, {
    organizationId: org,
    rightsholderIds,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

/** The rate the fx_rates table holds for a currency on the last published day on or before `date`. */
async function rateOn(currency: string, date: string) {
  const { rows } = await srv.deps.pool.query<{ rate: string; day: string }>(
    `SELECT usd_per_unit::text AS rate, to_char(rate_date, 'YYYY-MM-DD') AS day FROM fx_rates WHERE currency = $1 AND rate_date <= $2 ORDER BY rate_date DESC LIMIT 1`,
    [currency, date],
  );
  return rows[0]!;
}

t.test('getDefaultFxDate: the last day of the latest statement period', async (t) => {
  t.same(await get('getDefaultFxDate', [ds.rh1, ds.rh2]), {
    date: '2024-03-31',
    rightsholderIds: [ds.rh1, ds.rh2],
  });
  t.same(await get('getDefaultFxDate', [ds.rh2]), {
    date: '2024-01-31',
    rightsholderIds: [ds.rh2],
  });
  const empty = await seedRightsholder(srv, org, 'No Statements');
  t.same(await get('getDefaultFxDate', [empty]), { date: null, rightsholderIds: [empty] });
});

t.test('getDefaultFxRates: the rates on that day for the currencies of the rows', async (t) => {
  await seedStatement(srv, {
    organizationId: org,
    rightsholderId: ds.rh2,
    stmt: { year: 2024, period: 8, cadence: 'M' },
    currency: 'EUR',
    rows: [
      { raw_title: 'a', currency: 'EUR', units: '1' },
      { raw_title: 'b', currency: 'JPY', units: '1' },
      { raw_title: 'c', currency: 'XTS', units: '1' },
    ],
  });
  const data = await get('getDefaultFxRates', [ds.rh1, ds.rh2]);
  t.equal(data.date, '2024-08-31');
  const eur = await rateOn('EUR', '2024-08-31');
  const gbp = await rateOn('GBP', '2024-08-31');
  const jpy = await rateOn('JPY', '2024-08-31');
  t.equal(eur.day, '2024-08-30', 'the 31st was a Saturday: the last published day');
  t.same(data, {
    date: '2024-08-31',
    base: 'USD',
    rates: [
      { currency: 'EUR', rate: eur.rate, rateDate: eur.day },
      { currency: 'GBP', rate: gbp.rate, rateDate: gbp.day },
      { currency: 'JPY', rate: jpy.rate, rateDate: jpy.day },
      { currency: 'USD', rate: '1', rateDate: '2024-08-31' },
    ],
    missing: ['XTS'],
    rightsholderIds: [ds.rh1, ds.rh2],
  });
  const empty = await seedRightsholder(srv, org, 'Nothing Yet');
  t.same(await get('getDefaultFxRates', [empty]), {
    date: null,
    base: 'USD',
    rates: [],
    missing: [],
    rightsholderIds: [empty],
  });
});

t.test('an empty rightsholderIds reports on none; a missing one is refused', async (t) => {
  t.same(await get('getDefaultFxDate', []), { date: null, rightsholderIds: [] });
  t.same(await get('getDefaultFxRates', []), {
    date: null,
    base: 'USD',
    rates: [],
    missing: [],
    rightsholderIds: [],
  });
  t.match(await owner.client.queryUnchecked('insights.getDefaultFxDate', { organizationId: org }), {
    ok: false,
    error: {
      data: {
        code: 'BAD_REQUEST',
        errorCode: 'VALIDATION_FAILED',
        fields: [{ path: 'rightsholderIds' }],
      },
    },
  });
});
