// The two filters the server decides about itself (spec, analytics rules 1 and 3): a client filter
// on organization_id keeps the meaning of the group it stands in (it is its truth value for the
// caller's organization, never a condition that could widen the tenant scope), and the mandatory
// rightsholder filter must really name rightsholders, on every path through the filters.
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { m } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Tenant Filters Org');
const org = owner.organizationId;
const other = (await newOrganization(srv, 'Tenant Filters Other')).organizationId;
const ds = await seedDataset(srv, org);
await seedDataset(srv, other, 'Other ');
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const ALL = ['Alpha', 'Beta 100%', 'Delta\\Path', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'];

async function cube(query: Record<string, unknown>) {
  return owner.client.mutate('cube.query', { organizationId: org, query });
}

/** The titles the filters keep (with the rightsholder filter), in title order. */
async function titles(...filters: object[]): Promise<string[]> {
  const res = await cube({ measures: [m('units')], dimensions: [m('track_title_raw')], filters: [both, ...filters], order: { [m('track_title_raw')]: 'asc' } });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data.map((r: Record<string, string>) => r[m('track_title_raw')]);
}

const orgIs = (operator: string, ...values: (string | null)[]) => ({ member: m('organization_id'), operator, ...(values.length ? { values } : {}) });
const title = (value: string) => ({ member: m('track_title_raw'), operator: 'equals', values: [value] });

t.test('an organization filter at the top level is its truth value for the caller', async (t) => {
  t.same(await titles(orgIs('equals', org)), ALL, 'the own organization: every row');
  t.same(await titles(orgIs('equals', org.toUpperCase())), ALL, 'in capitals too');
  t.same(await titles(orgIs('equals', other)), [], 'another organization: no row, not the own rows');
  t.same(await titles(orgIs('equals', other, org)), ALL, 'a list with the own one');
  t.same(await titles(orgIs('notEquals', org.toUpperCase())), [], 'notEquals the own one: no row');
  t.same(await titles(orgIs('notEquals', other)), ALL);
  t.same(await titles(orgIs('set')), ALL);
  t.same(await titles(orgIs('notSet')), []);
  t.same(await titles(orgIs('contains', org.slice(9, 13).toUpperCase())), ALL, 'contains matches the text without case');
  t.same(await titles(orgIs('notContains', org.slice(0, 8))), []);
  t.same(await titles(orgIs('gt', '0')), ALL, 'a string member compares lexicographically');
  t.same(await titles(orgIs('lt', '0')), []);
  const total = await cube({ measures: [m('units')], filters: [both, orgIs('equals', other)], total: true });
  t.match(total, { ok: true, data: { data: [{ [m('units')]: null }], total: 1 } }, 'no row: the sum over nothing');
});

t.test('inside or/and groups it keeps the meaning of the group', async (t) => {
  t.same(await titles({ or: [orgIs('equals', org), title('Alpha')] }), ALL, 'own OR x is true for every row of the tenant');
  t.same(await titles({ or: [orgIs('equals', org.toUpperCase()), title('Alpha')] }), ALL);
  t.same(await titles({ or: [orgIs('equals', other), title('Alpha')] }), ['Alpha'], 'other OR x is x');
  t.same(await titles({ or: [orgIs('notEquals', org)] }), [], 'a group of only a false organization filter keeps nothing');
  t.same(await titles({ and: [orgIs('equals', org), title('Echo')] }), ['Echo']);
  t.same(await titles({ and: [orgIs('equals', other), title('Echo')] }), []);
  t.same(await titles({ or: [{ and: [orgIs('equals', other), title('Alpha')] }, title('Echo')] }), ['Echo'], 'nested: (other AND Alpha) OR Echo');
  t.same(await titles({ or: [{ and: [orgIs('set'), title('Alpha')] }, title('Echo')] }), ['Alpha', 'Echo']);
  t.same(await titles({ and: [{ or: [orgIs('notSet'), title('Golf')] }, { or: [orgIs('equals', org), title('nothing')] }] }), ['Golf']);
  const echoed = await cube({ measures: [m('units')], filters: [both, { or: [orgIs('equals', other.toUpperCase()), title('Alpha')] }] });
  t.match(echoed, { ok: true });
  if (echoed.ok) {
    t.same(
      echoed.data.query.filters,
      [both, { or: [orgIs('equals', other.toUpperCase()), title('Alpha')] }, orgIs('equals', org)],
      'echoed where and as it was sent, the injected organization last',
    );
  }
});

t.test('no organization filter reaches another tenant', async (t) => {
  const res = await cube({
    measures: [m('units')],
    dimensions: [m('organization_id')],
    filters: [both, { or: [orgIs('equals', other), orgIs('notEquals', org), orgIs('set')] }],
  });
  t.match(res, { ok: true, data: { data: [{ [m('organization_id')]: org, [m('units')]: '1618' }] } });
});

t.test('the rightsholder filter must name rightsholders on every path', async (t) => {
  const rh = (operator: string, ...values: (string | null)[]) => ({ member: m('rightsholder_id'), operator, ...(values.length ? { values } : {}) });
  const refused = [
    [rh('contains', '')],
    [rh('contains', ds.rh1)],
    [rh('notEquals', ds.rh1)],
    [rh('notContains', 'x')],
    [rh('gt', '')],
    [rh('set')],
    [rh('notSet')],
    [rh('equals', 'not-an-id')],
    [rh('equals', null)],
    [{ or: [rh('equals', ds.rh1), { member: m('currency'), operator: 'equals', values: ['EUR'] }] }],
    [{ or: [rh('equals', ds.rh1), { and: [rh('notEquals', ds.rh1)] }] }],
    [{ and: [{ member: m('currency'), operator: 'set' }] }, rh('set')],
  ];
  for (const filters of refused) {
    const res = await cube({ measures: [m('units')], filters });
    t.match(res, { ok: false, error: { data: { code: 'BAD_REQUEST', errorCode: 'RIGHTSHOLDER_FILTER_REQUIRED', httpStatus: 400 } } }, JSON.stringify(filters));
  }
  const accepted: [object[], string][] = [
    [[rh('equals', ds.rh1)], '1611'],
    [[rh('equals', ds.rh2.toUpperCase())], '7'],
    [[rh('equals', ds.rh2, null)], '7'],
    [[rh('equals', ds.rh1), rh('notEquals', ds.rh1)], '0'],
    [[rh('notEquals', ds.rh1), { and: [rh('equals', ds.rh1, ds.rh2)] }], '7'],
    [[{ or: [rh('equals', ds.rh2), { and: [rh('equals', ds.rh1), { member: m('currency'), operator: 'equals', values: ['USD'] }] }] }], '1507'],
  ];
  for (const [filters, units] of accepted) {
    const res = await cube({ measures: [m('units')], filters });
    t.match(res, { ok: true, data: { data: [{ [m('units')]: units === '0' ? null : units }] } }, JSON.stringify(filters));
  }
});
