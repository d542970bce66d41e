// Tenant isolation of cube.query: another organization's rows are unreachable by any filter, the
// same body from two tenants names two queries, and rows a file wrongly claims for another
// organization enter nobody's analytics. (cube.sqlQuery's isolation: sqlQuery.test.ts.)
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { m, seedStatement } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const a = await newOrganization(srv, 'Tenant A');
const b = await newOrganization(srv, 'Tenant B');
const dsA = await seedDataset(srv, a.organizationId);
const dsB = await seedDataset(srv, b.organizationId, 'B ');
const everyone = [dsA.rh1, dsA.rh2, dsB.rh1, dsB.rh2];

async function query(caller: typeof a, q: Record<string, unknown>) {
  const res: Outcome<any> = await caller.client.mutate('cube.query', {
    organizationId: caller.organizationId,
    query: q,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

t.test("filters naming another tenant's rightsholders reach nothing", async (t) => {
  const onlyB = await query(a, {
    measures: [m('units'), m('statement_row_count')],
    filters: [{ member: m('rightsholder_id'), operator: 'equals', values: [dsB.rh1, dsB.rh2] }],
  });
  t.same(onlyB.data, [{ [m('units')]: null, [m('statement_row_count')]: '0' }]);
  const negated = await query(a, {
    measures: [m('units')],
    dimensions: [m('rightsholder_id')],
    filters: [
      { member: m('rightsholder_id'), operator: 'equals', values: everyone },
      { member: m('rightsholder_id'), operator: 'notEquals', values: [dsA.rh1] },
    ],
  });
  t.same(
    negated.data.map((r: Record<string, string>) => r[m('rightsholder_id')]),
    [dsA.rh2],
    'notEquals keeps every other row, but only of this tenant',
  );
});

t.test('no organization filter, no or-group, no member reaches another tenant', async (t) => {
  const hostile = await query(a, {
    measures: [m('units')],
    dimensions: [
      m('organization_id'),
      m('rightsholder_name'),
      m('distributor_name'),
      m('statement_id'),
    ],
    filters: [
      { member: m('rightsholder_id'), operator: 'equals', values: everyone },
      {
        or: [
          { member: m('organization_id'), operator: 'equals', values: [b.organizationId] },
          { member: m('organization_id'), operator: 'set' },
        ],
      },
      // false for every row of A, but what it names is never compared with a row
      {
        or: [
          { member: m('organization_id'), operator: 'notEquals', values: [a.organizationId] },
          { member: m('statement_id'), operator: 'set' },
        ],
      },
    ],
  });
  t.same(
    new Set(hostile.data.map((r: Record<string, string>) => r[m('organization_id')])),
    new Set([a.organizationId]),
  );
  t.same(
    new Set(hostile.data.map((r: Record<string, string>) => r[m('statement_id')])),
    new Set([dsA.s1, dsA.s2, dsA.s3]),
  );
  t.notOk(
    hostile.data.some(
      (r: Record<string, string>) =>
        r[m('rightsholder_name')]?.startsWith('B ') ||
        r[m('distributor_name')] === 'B Own Distribution',
    ),
    "no name of the other tenant's",
  );
});

t.test('the same body from two tenants: two queries, two answers', async (t) => {
  const body = {
    measures: [m('units')],
    dimensions: [m('rightsholder_name')],
    filters: [{ member: m('rightsholder_id'), operator: 'equals', values: everyone }],
  };
  const fromA = await query(a, body);
  const fromB = await query(b, body);
  t.same(
    fromA.data.map((r: Record<string, string>) => r[m('rightsholder_name')]),
    ['Artist One', 'Artist Two'],
  );
  t.same(
    fromB.data.map((r: Record<string, string>) => r[m('rightsholder_name')]),
    ['B Artist One', 'B Artist Two'],
  );
  t.same(fromB.query.filters.at(-1), {
    member: m('organization_id'),
    operator: 'equals',
    values: [b.organizationId],
  });
  const asyncB: Outcome<any> = await b.client.mutate('cube.queryAsync', {
    organizationId: b.organizationId,
    query: body,
  });
  t.same(asyncB.data.data.data, fromB.data, "the async path of B answers B's rows");
  const foreign: Outcome<any> = await a.client.mutate('cube.query', {
    organizationId: b.organizationId,
    query: body,
  });
  t.match(foreign, { ok: false, error: { data: { errorCode: 'ORGANIZATION_MISMATCH' } } });
});

t.test(
  "rows a statement file claims for another organization enter nobody's analytics",
  async (t) => {
    await seedStatement(srv, {
      organizationId: b.organizationId,
      rightsholderId: dsB.rh1,
      stmt: { year: 2024, period: 5, cadence: 'M' },
      rows: [
        {
          organization_id: a.organizationId,
          rightsholder_id: dsA.rh1,
          raw_title: 'Smuggled',
          units: '999',
        },
        { raw_title: 'Honest', units: '1' },
      ],
    });
    const inA = await query(a, {
      measures: [m('units')],
      dimensions: [m('track_title_raw')],
      filters: [
        { member: m('rightsholder_id'), operator: 'equals', values: everyone },
        { member: m('track_title_raw'), operator: 'equals', values: ['Smuggled', 'Honest'] },
      ],
    });
    t.same(inA.data, []);
    const inB = await query(b, {
      measures: [m('units')],
      dimensions: [m('track_title_raw')],
      filters: [
        { member: m('rightsholder_id'), operator: 'equals', values: everyone },
        { member: m('track_title_raw'), operator: 'equals', values: ['Smuggled', 'Honest'] },
      ],
    });
    t.same(inB.data, [{ [m('track_title_raw')]: 'Honest', [m('units')]: '1' }]);
  },
);

t.test("each tenant's analytics database is its own file", async (t) => {
  const { readdir } = await import('node:fs/promises');
  const dirs = (await readdir(srv.config.analytics.dir)).filter((d) => d !== 'sandbox').sort();
  t.same(dirs, [a.organizationId, b.organizationId].sort());
});
