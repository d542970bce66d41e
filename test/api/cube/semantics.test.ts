// cube.query at the handler where Cube's exact query semantics are easy to miss
// (docs/spec/cube-query-semantics.md): where the time dimensions named in `dimensions` go,
// and a date or timestamp given alone, which Cube's date parser reads as its whole day.
import t from 'tap';
import { m, seedDistributor, seedRightsholder, seedStatement } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Cube Semantics Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const spd = m('sales_period_start');
const spe = m('sales_period_end');

async function ok(query: Record<string, unknown>) {
  const res: Outcome<any> = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

t.test(
  'a granular member in dimensions comes after the timeDimensions: echo and default order',
  async (t) => {
    // Cube's normalizeQuery appends `view.td.g` of dimensions to timeDimensions, and the default
    // order is the first time dimension with a granularity, ascending
    const rh = await seedRightsholder(srv, org, 'Artist Order');
    const d = await seedDistributor(srv, org, 'Order Co');
    await seedStatement(srv, {
      organizationId: org,
      rightsholderId: rh,
      distributorId: d,
      stmt: { year: 2024, period: 1, cadence: 'M' },
      rows: [
        {
          raw_title: 'Long',
          royalty_earnings: '1',
          units: '3',
          sales_period_start: '2023-12-01',
          sales_period_end: '2025-01-01',
        },
        {
          raw_title: 'Short',
          royalty_earnings: '1',
          units: '4',
          sales_period_start: '2024-01-01',
          sales_period_end: '2024-01-31',
        },
      ],
    });
    const data = await ok({
      measures: [m('units')],
      dimensions: [`${spe}.year`],
      timeDimensions: [{ dimension: spd, granularity: 'month' }],
      filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [rh] }],
    });
    t.same(data.query.timeDimensions, [
      { dimension: spd, granularity: 'month' },
      { dimension: spe, granularity: 'year' },
    ]);
    t.same(data.query.dimensions, []);
    t.same(
      data.data.map((r: Record<string, string>) => [
        r[`${spd}.month`],
        r[`${spe}.year`],
        r[m('units')],
      ]),
      [
        ['2023-12-01T00:00:00.000', '2025-01-01T00:00:00.000', '3'],
        ['2024-01-01T00:00:00.000', '2024-01-01T00:00:00.000', '4'],
      ],
      'ordered by sales_period_start.month, not by sales_period_end.year',
    );
  },
);

t.test(
  'a date or timestamp alone is its whole day; in a one-element array a timestamp is kept',
  async (t) => {
    const units = async (extra: Record<string, unknown>) =>
      (await ok({ measures: [m('units')], filters: [both], ...extra })).data[0][m('units')];
    const golfDay = ['2024-01-10T00:00:00.000', '2024-01-10T23:59:59.999'];

    const ranged = await ok({
      measures: [m('units')],
      timeDimensions: [{ dimension: spd, dateRange: '2024-01-10T12:00' }],
      filters: [both],
    });
    t.same(
      ranged.query.timeDimensions,
      [{ dimension: spd, dateRange: golfDay }],
      'a dateRange string: rule 5, the whole day',
    );
    t.same(ranged.data, [{ [m('units')]: '7' }]);
    t.equal(
      await units({ timeDimensions: [{ dimension: spd, dateRange: '2024-01-10 23:59:59.999' }] }),
      '7',
    );

    const inRange = await ok({
      measures: [m('units')],
      filters: [both, { member: spd, operator: 'inDateRange', values: ['2024-01-10T12:00'] }],
    });
    t.same(
      inRange.query.filters[1],
      { member: spd, operator: 'inDateRange', values: ['2024-01-10T12:00'] },
      'echoed as sent',
    );
    t.same(inRange.data, [{ [m('units')]: '7' }]);
    t.equal(
      await units({
        filters: [
          both,
          { member: spd, operator: 'notInDateRange', values: ['2024-01-10T12:00:00.000Z'] },
        ],
      }),
      '1611',
      'every dated row but Golf',
    );

    const point = await ok({
      measures: [m('units')],
      timeDimensions: [{ dimension: spd, dateRange: ['2024-01-10T12:00'] }],
      filters: [both],
    });
    t.same(
      point.query.timeDimensions[0].dateRange,
      ['2024-01-10T12:00:00.000', '2024-01-10T12:00:00.000'],
      'an array [d] is [d, d], as given',
    );
    t.same(point.data, [{ [m('units')]: null }], 'no date lies at 12:00');
  },
);
