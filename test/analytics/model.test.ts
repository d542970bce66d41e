// The semantic model: valid, complete against the specification's member list, and the source
// of cube.meta. Broken models are reported with every problem and its path.
import { DuckDBInstance, LIST, VARCHAR, listValue } from '@duckdb/node-api';
import fc from 'fast-check';
import pg from 'pg';
import t from 'tap';
import { cubeMeta } from '../../src/analytics/meta.ts';
import { model, usdAnswer, type SemanticModel } from '../../src/analytics/model.ts';
import { fixedText, roundHalfEven, USD_SCALE } from '../../src/decimal.ts';
import { createTestDatabase } from '../helpers/db.ts';
import { validateModel, resolveModel, ModelError } from '../../src/analytics/modelSchema.ts';

// The specification's tables (royalty-api-spec.md, "Analytics view analytics_full_view").
const specMeasures = [
  'statement_count',
  'statement_row_count',
  'royalty_earnings',
  'gross_royalty_earnings',
  'units',
  'royalty_earnings_usd',
  'gross_royalty_earnings_usd',
  'product_dollar_age',
  'fetching_percentage',
  'product_age_avg',
  'product_age_percentage',
  'product_dollar_age_percentage',
];
const specNumberDimensions = [
  'stmt_year',
  'stmt_period',
  'royalty_rate',
  'tax_deduction',
  'territory_deduction',
  'product_age',
  'fx_rate',
];
const specStringDimensions = [
  'stmt_cadence',
  'stmt_period_full',
  'stmt_period_month',
  'currency',
  'territory_raw',
  'territory',
  'primary_rights_type',
  'secondary_rights_type',
  'rightsholder_id',
  'rightsholder_name',
  'custom_name',
  'file_name',
  'account_number',
  'account_name',
  'legal_vendor',
  'payor',
  'track_title_raw',
  'track_artist_raw',
  'track_title',
  'track_artist',
  'release_title_raw',
  'release_artist_raw',
  'release_title',
  'release_artist',
  'isrc',
  'iswc',
  'upc',
  'other_identifier',
  'composers_raw',
  'other_adjustments',
  'sales_type_raw',
  'sales_subtype_raw',
  'source_raw',
  'subsource_raw',
  'full_sales_type_raw',
  'full_source_raw',
  'product_age_bucket',
  'product_title',
  'product_artist',
  'primary_sales_type',
  'secondary_sales_type',
  'source',
  'earnings_collection_source',
  'earnings_source',
  'earnings_category',
  'earnings_parent_company',
  'publisher_source',
  'distributor_name',
  'tm',
];
const specTimeDimensions = [
  'sales_period_start',
  'sales_period_end',
  'release_date',
  'release_release_date',
  'product_release_date',
];

t.test('the model is valid', async (t) => {
  t.same(validateModel(model), []);
  t.ok(resolveModel(model));
});

t.test(
  'every member of the specification exists with its type, a title and a description',
  async (t) => {
    const dims = new Map(model.dimensions.map((d) => [d.name, d]));
    const measures = new Map(model.measures.map((m) => [m.name, m]));
    for (const name of specMeasures) t.equal(measures.get(name)?.type, 'number', `measure ${name}`);
    for (const name of specNumberDimensions)
      t.equal(dims.get(name)?.type, 'number', `number dimension ${name}`);
    for (const name of specStringDimensions)
      t.equal(dims.get(name)?.type, 'string', `string dimension ${name}`);
    for (const name of specTimeDimensions)
      t.equal(dims.get(name)?.type, 'time', `time dimension ${name}`);
    for (const member of [...model.dimensions, ...model.measures]) {
      t.ok(
        member.title.length > 1 && member.description.length >= 20,
        `${member.name} has a title and a definition`,
      );
    }
    t.equal(model.measures.length, 12);
    // the spec's members plus organization_id, statement_id, distributor_id and source_row
    t.equal(
      model.dimensions.length,
      specNumberDimensions.length + specStringDimensions.length + specTimeDimensions.length + 5,
    );
  },
);

t.test('DESIGN.md definitions are stated in the descriptions', async (t) => {
  const d = (n: string) =>
    [...model.dimensions, ...model.measures].find((x) => x.name === n)!.description;
  t.match(d('tm'), /00\.TM for k = 0, 01\.LTM for 1-12, 02\.PTM for 13-24, then 03\.TM for 25-36/);
  t.match(d('product_age_bucket'), /rounded down.*'8\+' for 8 years or more/);
  t.match(d('product_dollar_age'), /01\.LTM with a known product age and positive USD earnings/);
  t.match(d('fetching_percentage'), /this is 0/);
  t.match(d('track_title'), /raw value from the statement/);
});

t.test('cube.meta is derived from the model', async (t) => {
  const view = cubeMeta.cubes[0]!;
  t.equal(view.name, 'analytics_full_view');
  t.equal(view.type, 'view');
  t.same(
    view.measures.map((m) => m.name),
    model.measures.map((m) => `analytics_full_view.${m.name}`),
  );
  t.same(
    view.dimensions.map((d) => [d.name, d.type]),
    model.dimensions.map((d) => [`analytics_full_view.${d.name}`, d.type]),
  );
  t.match(
    view.measures.find((m) => m.name === 'analytics_full_view.royalty_earnings_usd'),
    {
      title: 'Analytics Full View Royalty Earnings USD',
      shortTitle: 'Royalty Earnings USD',
      type: 'number',
      aggType: 'sum',
      format: 'currency',
    },
  );
});

const broken = (change: (m: SemanticModel) => void): SemanticModel => {
  const copy = structuredClone(model);
  change(copy);
  return copy;
};

t.test('a broken model is reported with every problem and its path', async (t) => {
  const issues = validateModel(
    broken((m) => {
      m.dimensions[0]!.sql = '{no_such_member}';
      m.dimensions[1]!.sql = 'st.primary_sales_type';
      m.dimensions[2]!.sql = 'f.no_such_column';
      m.measures.push({ ...m.measures[0]!, title: 'Dup' });
      m.expressions.loop_a = { sql: '{loop_b}', joins: [] };
      m.expressions.loop_b = { sql: '{loop_a}', joins: [] };
      m.dimensions[3]!.sql = '{loop_a}';
      m.measures[8]!.rollup = 'same';
      m.measures[8]!.sql = 'sum(f.raw_title)';
    }),
  );
  const at = (path: string) => issues.filter((i) => i.path === path).map((i) => i.message);
  t.match(at('dimensions.0.sql'), [/\{no_such_member\} names no dimension or expression/]);
  t.match(at('dimensions.1.sql'), [/uses st\.primary_sales_type without the salesType join/]);
  t.match(at('dimensions.2.sql'), [/f\.no_such_column is not a facts column/]);
  t.match(at('measures.12'), [/statement_count is also defined at measures\.0/]);
  t.ok(
    issues.some((i) => /circular reference/.test(i.message)),
    'a cycle',
  );
  t.match(at('measures.8.rollup'), [/reads raw_title, which no rollup has/]);
  t.throws(() => resolveModel(broken((m) => (m.view.name = 'Bad Name'))), ModelError);
  t.match(validateModel(broken((m) => ((m.dimensions[0] as { type: string }).type = 'boolean'))), [
    { path: 'dimensions.0.type' },
  ]);
  t.match(validateModel(broken((m) => m.rollups[0]!.groupBy.splice(0, 1))), [
    { path: 'rollups.0.groupBy', message: /organization_id/ },
  ]);
});

// below 1e12 US dollars (what analytics computes, ANALYTICS_VALUE_OUT_OF_RANGE beyond), and as
// often a tie at the 11th decimal (units of 10^-26 ending in 5 × 10^15) as any other value; a tie
// stays inside the bound too (k = ±10^22 would be 1e12 and a half, which DECIMAL(38,26) cannot hold)
const bound = 10n ** 38n - 1n;
const usdAmount = fc.oneof(
  fc.bigInt({ min: -bound, max: bound }),
  fc
    .bigInt({ min: -(10n ** 22n) + 1n, max: 10n ** 22n - 1n })
    .map((k) => k * 10n ** 16n + (k < 0n ? -5n : 5n) * 10n ** 15n),
  fc.bigInt({ min: -(10n ** 20n), max: 10n ** 20n }),
);

// The US-dollar amounts of answers (docs/money.md): DuckDB's exact DECIMAL(38,26) rounded once to
// 10 decimals, half to even, in SQL; the same as the BigInt rule of decimal.ts on every value.
t.test(
  'usdAnswer rounds an exact amount half to even at 10 decimals, as roundHalfEven does',
  async (t) => {
    const c = await (await DuckDBInstance.create(':memory:')).connect();
    const answers = async (values: string[]) => {
      const sql = `SELECT CAST(${usdAnswer('CAST(v AS DECIMAL(38,26))')} AS VARCHAR) FROM (SELECT unnest($1::VARCHAR[]) AS v)`;
      return (await c.runAndReadAll(sql, [listValue(values)], [LIST(VARCHAR)]))
        .getRows()
        .map((r) => roundHalfEven(String(r[0]), USD_SCALE));
    };
    t.same(
      await answers([
        '1.12345678905',
        '1.12345678915',
        '-1.12345678905',
        '-1.12345678915',
        '1.12345678905000000000000001',
        '-0.00000000005',
        '0.00000000015',
        '999999999999.99999999995',
        '-999999999999.99999999985',
      ]),
      [
        '1.123456789',
        '1.1234567892',
        '-1.123456789',
        '-1.1234567892',
        '1.1234567891',
        '0',
        '0.0000000002',
        '1000000000000',
        '-999999999999.9999999998',
      ],
    );
    t.same(
      await answers(['238.95984887993509241931611655']),
      ['238.9598488799'],
      "the issue's example",
    );
    await fc.assert(
      fc.asyncProperty(fc.array(usdAmount, { minLength: 1, maxLength: 200 }), async (units) => {
        const texts = units.map((u) => fixedText(u, 26));
        t.same(
          await answers(texts),
          texts.map((x) => roundHalfEven(x, USD_SCALE)),
        );
      }),
      { numRuns: 50 },
    );
    c.closeSync();
  },
);

// the catalog's and the lookups' answers: PostgreSQL's usd_answer (sql/migrations/000045), the same rule
t.test('usd_answer in PostgreSQL rounds as roundHalfEven does', async (t) => {
  const db = await createTestDatabase();
  t.teardown(() => db.drop());
  const client = new pg.Client({ connectionString: db.url });
  await client.connect();
  t.teardown(() => client.end());
  const answers = async (values: string[]) =>
    (
      await client.query<{ a: string }>(
        'SELECT usd_answer(v)::text AS a FROM unnest($1::numeric[]) WITH ORDINALITY AS x(v, i) ORDER BY i',
        [values],
      )
    ).rows.map((r) => r.a);
  t.same(
    await answers(['1.12345678905', '-1.12345678915', '-0.00000000005', '242.66980979553019', '7']),
    ['1.123456789', '-1.1234567892', '0', '242.6698097955', '7'],
  );
  await fc.assert(
    fc.asyncProperty(fc.array(usdAmount, { minLength: 1, maxLength: 200 }), async (units) => {
      const texts = units.map((u) => fixedText(u, 26));
      t.same(
        await answers(texts),
        texts.map((x) => roundHalfEven(x, USD_SCALE)),
      );
    }),
    { numRuns: 50 },
  );
});
