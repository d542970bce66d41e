// `royalty query` options as an analytics query, and the exact decimal sums the CLI prints.
import t from 'tap';
import { buildQuery, monthRange, parseFilter } from '../../src/royalty/analytics.ts';
import { sumDecimals, UsageError } from '../../src/royalty/output.ts';
import { inputFromPairs } from '../../src/royalty/catalog.ts';

const RH = '2b1c7f0e-8a55-4f6e-9d7e-0c5a3b1d2e4f';

t.test('filters: the first operator sign splits member from values', async (t) => {
  t.same(parseFilter('territory=US,DE'), {
    member: 'analytics_full_view.territory',
    operator: 'equals',
    values: ['US', 'DE'],
  });
  t.same(parseFilter('units>=10'), {
    member: 'analytics_full_view.units',
    operator: 'gte',
    values: ['10'],
  });
  t.same(
    parseFilter('payor!=A=B'),
    { member: 'analytics_full_view.payor', operator: 'notEquals', values: ['A=B'] },
    'later signs belong to the value',
  );
  t.same(parseFilter('track_title~love'), {
    member: 'analytics_full_view.track_title',
    operator: 'contains',
    values: ['love'],
  });
  t.same(parseFilter('source!~spot'), {
    member: 'analytics_full_view.source',
    operator: 'notContains',
    values: ['spot'],
  });
  t.throws(() => parseFilter('territory'), UsageError);
  t.throws(() => parseFilter('=US'), UsageError);
  t.throws(() => parseFilter("territory'; DROP TABLE x;--=1"), UsageError, 'a member is a name');
});

t.test('month ranges: first to last day, leap years, one month', async (t) => {
  t.same(monthRange('2024-01..2024-02'), ['2024-01-01', '2024-02-29']);
  t.same(monthRange('2023-02'), ['2023-02-01', '2023-02-28']);
  t.same(monthRange('2023-11..2024-12'), ['2023-11-01', '2024-12-31']);
  for (const bad of [
    '2024-13',
    '2024-00..2024-01',
    '2024-05..2024-04',
    '2024-1',
    '24-01',
    '2024-01..',
  ])
    t.throws(() => monthRange(bad), UsageError, bad);
});

t.test(
  'the query: short member names, the rightsholder filter first, options as given',
  async (t) => {
    t.same(
      buildQuery(
        {
          measure: ['royalty_earnings'],
          dimension: ['territory'],
          filter: ['currency=GBP'],
          monthRange: '2024-03',
          granularity: 'month',
          order: ['royalty_earnings:desc'],
          limit: '10',
        },
        [RH],
      ),
      {
        measures: ['analytics_full_view.royalty_earnings'],
        dimensions: ['analytics_full_view.territory'],
        filters: [
          { member: 'analytics_full_view.rightsholder_id', operator: 'equals', values: [RH] },
          { member: 'analytics_full_view.currency', operator: 'equals', values: ['GBP'] },
        ],
        timeDimensions: [
          {
            dimension: 'analytics_full_view.sales_period_start',
            dateRange: ['2024-03-01', '2024-03-31'],
            granularity: 'month',
          },
        ],
        order: [['analytics_full_view.royalty_earnings', 'desc']],
        limit: 10,
      },
    );
    t.throws(() => buildQuery({}, [RH]), /at least one --measure or --dimension/);
    t.throws(() => buildQuery({ measure: ['units'], order: ['units:up'] }, [RH]), UsageError);
    t.throws(() => buildQuery({ measure: ['units'], limit: '1.5' }, [RH]), UsageError);
  },
);

t.test('sums of decimal texts are exact at any scale', async (t) => {
  t.equal(sumDecimals(['436.0742266413', '223.014277475000']), '659.088504116300');
  t.equal(sumDecimals(['0.1', '0.2']), '0.3');
  t.equal(sumDecimals(['-1.25', '1.25']), '0.00');
  t.equal(sumDecimals(['-0.5', '0.25']), '-0.25');
  t.equal(
    sumDecimals(['99999999999999999999.999999999999', '0.000000000001']),
    '100000000000000000000.000000000000',
  );
  t.throws(() => sumDecimals(['1e3']));
});

t.test('key=value input: nesting, JSON values, no prototype keys', async (t) => {
  t.same(
    inputFromPairs([
      'name=Ann',
      'pagination.page=2',
      'pagination.limit=5',
      'ids=["a","b"]',
      'flag=true',
    ]),
    {
      name: 'Ann',
      pagination: { page: 2, limit: 5 },
      ids: ['a', 'b'],
      flag: true,
    },
  );
  t.same(inputFromPairs(['note=a=b']), { note: 'a=b' });
  for (const bad of [
    '__proto__.polluted=1',
    'a.constructor.prototype=1',
    'noequals',
    '=1',
    'a..b=1',
  ])
    t.throws(() => inputFromPairs([bad]), UsageError, bad);
  t.throws(() => inputFromPairs(['a=1', 'a.b=2']), /given twice/);
  t.equal(({} as Record<string, unknown>).polluted, undefined);
});
