// cube.query over HTTP: the parts of Cube's query language beyond the basics, each compared with
// the exact answer Cube gives on the synthetic dataset (test/analytics/dataset.ts): paging with
// offset, limit 0, the date and string operators, timezone, and the response envelope.
import t from 'tap';
import { m } from '../../analytics/helpers.ts';
import { seedDataset } from '../../analytics/dataset.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Cube Query Language Org');
const org = owner.organizationId;
const ds = await seedDataset(srv, org);
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const title = m('track_title_raw');

async function ok(query: Record<string, unknown>) {
  const res = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data;
}

async function refused(query: Record<string, unknown>) {
  const res = await owner.client.mutate('cube.query', { organizationId: org, query });
  if (res.ok) throw new Error(`accepted: ${JSON.stringify(query)}`);
  return res.error.data;
}

/** [title, units, royalty_earnings] of each row, in the answer's order. */
const rowsOf = (data: { data: Record<string, string | null>[] }) => data.data.map((r) => [r[title], r[m('units')], r[m('royalty_earnings')]]);

// by the default order (units, descending): Echo 1000, Foxtrot 500, Alpha 100, Beta 100% 10,
// Golf 7, Delta\Path 1, gamma_x 0
const byUnits = { measures: [m('units'), m('royalty_earnings')], dimensions: [title], filters: [both] };

t.test('offset pages through the result, with limit and total', async (t) => {
  const page = await ok({ ...byUnits, limit: 2, offset: 2, total: true });
  t.same(rowsOf(page), [
    ['Alpha', '100', '10.5'],
    ['Beta 100%', '10', '2.25'],
  ]);
  t.equal(page.total, 7, 'total ignores limit and offset');
  t.match(page.query, { limit: 2, offset: 2, rowLimit: 2, total: true });

  const last = await ok({ ...byUnits, limit: 5, offset: 5 });
  t.same(rowsOf(last), [
    ['Delta\\Path', '1', '0.000000000001'],
    ['gamma_x', '0', '-1'],
  ]);
  t.same((await ok({ ...byUnits, offset: 7, total: true })).data, [], 'past the end: no rows');
  t.notOk('offset' in (await ok(byUnits)).query, 'offset echoed only when sent');

  // the pages together are the whole answer, in order
  const pages = [];
  for (let offset = 0; offset < 7; offset += 3) pages.push(...rowsOf(await ok({ ...byUnits, limit: 3, offset })));
  t.same(pages, rowsOf(await ok(byUnits)));
});

t.test('limit 0 is accepted: no rows, total still counted', async (t) => {
  const counted = await ok({ ...byUnits, limit: 0, total: true });
  t.same(counted.data, []);
  t.equal(counted.total, 7);
  t.match(counted.query, { limit: 0, rowLimit: 0 });
  const plain = await ok({ ...byUnits, limit: 0 });
  t.same(plain.data, []);
  t.notOk('total' in plain);
});

t.test('offset and limit are strict integers', async (t) => {
  for (const [query, path] of [
    [{ ...byUnits, offset: -1 }, 'query.offset'],
    [{ ...byUnits, offset: 0.5 }, 'query.offset'],
    [{ ...byUnits, offset: '2' }, 'query.offset'],
    [{ ...byUnits, limit: -1 }, 'query.limit'],
  ] as const) {
    const error = await refused(query);
    t.match(error, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
    t.match(error.fields, [{ path }], path);
  }
});
