// The two filters the server decides about itself (spec, analytics rules 1 and 3): a client filter
// on organization_id is stripped wherever it stands (the organization is the caller's, never the
// query's), on the sync and async paths alike, and the mandatory rightsholder filter must really
// name rightsholders, on every path through the filters. Called at the handler (in process).
import t from 'tap';
import { seedDataset } from '../../analytics/dataset.ts';
import { m } from '../../analytics/helpers.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import type { Outcome } from '../../helpers/trpc.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Tenant Filters Org');
const org = owner.organizationId;
const other = (await newOrganization(srv, 'Tenant Filters Other')).organizationId;
const ds = await seedDataset(srv, org);
await seedDataset(srv, other, 'Other ');
const both = { member: m('rightsholder_id'), operator: 'equals', values: [ds.rh1, ds.rh2] };
const ALL = ['Alpha', 'Beta 100%', 'Delta\\Path', 'Echo', 'Foxtrot', 'Golf', 'gamma_x'];

/** cube.query's outcome, loosely typed: the tests read the plain envelope (no compareDateRange) */
async function cube(query: Record<string, unknown>): Promise<Outcome<any>> {
  return owner.client.mutate('cube.query', { organizationId: org, query });
}

/** The titles the filters keep (with the rightsholder filter), in title order. */
async function titles(...filters: object[]): Promise<string[]> {
  const res = await cube({
    measures: [m('units')],
    dimensions: [m('track_title_raw')],
    filters: [both, ...filters],
    order: { [m('track_title_raw')]: 'asc' },
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.data.map((r: Record<string, string>) => r[m('track_title_raw')]);
}

const orgIs = (operator: string, ...values: (string | null)[]) => ({
  member: m('organization_id'),
  operator,
  ...(values.length ? { values } : {}),
});
const title = (value: string) => ({
  member: m('track_title_raw'),
  operator: 'equals',
  values: [value],
});

t.test('an organization filter at the top level is stripped: it changes nothing', async (t) => {
  const variants = [
    orgIs('equals', org),
    orgIs('equals', org.toUpperCase()),
    orgIs('equals', other),
    orgIs('equals', other, org),
    orgIs('equals', null),
    orgIs('notEquals', org),
    orgIs('notEquals', other),
    orgIs('set'),
    orgIs('notSet'),
    orgIs('contains', org.slice(9, 13)),
    orgIs('notContains', org.slice(0, 8)),
    orgIs('startsWith', other.slice(0, 8)),
    orgIs('endsWith', 'zz'),
    orgIs('gt', 'g'),
    orgIs('lt', '0'),
  ];
  for (const f of variants) t.same(await titles(f), ALL, JSON.stringify(f));
  const total = await cube({
    measures: [m('units')],
    filters: [both, orgIs('equals', other)],
    total: true,
  });
  t.match(
    total,
    { ok: true, data: { data: [{ [m('units')]: '1618' }], total: 1 } },
    'another organization named: the own rows, all of them',
  );
});

t.test(
  'inside or/and groups at any depth it is stripped, and a group it empties goes too',
  async (t) => {
    t.same(
      await titles({ or: [orgIs('equals', other), title('Alpha')] }),
      ['Alpha'],
      'other OR x is x',
    );
    t.same(
      await titles({ or: [orgIs('equals', org), title('Alpha')] }),
      ['Alpha'],
      'own OR x is x too',
    );
    t.same(
      await titles({ or: [orgIs('notEquals', org)] }),
      ALL,
      'a group of only an organization filter is no filter',
    );
    t.same(await titles({ and: [orgIs('equals', other), title('Echo')] }), ['Echo']);
    t.same(
      await titles({ or: [{ and: [orgIs('equals', other), title('Alpha')] }, title('Echo')] }),
      ['Alpha', 'Echo'],
      'nested: (other AND Alpha) OR Echo',
    );
    t.same(
      await titles({ or: [{ and: [orgIs('notSet')] }, title('Golf')] }),
      ['Golf'],
      'an emptied inner group leaves its siblings',
    );
    t.same(
      await titles({
        and: [
          { or: [orgIs('notSet'), title('Golf')] },
          { or: [orgIs('equals', org), { or: [orgIs('equals', other)] }] },
        ],
      }),
      ['Golf'],
    );
    const echoed = await cube({
      measures: [m('units')],
      filters: [
        both,
        { or: [orgIs('equals', other.toUpperCase()), title('Alpha')] },
        { and: [orgIs('set'), { or: [orgIs('equals', other)] }] },
        orgIs('equals', other),
      ],
    });
    t.match(echoed, { ok: true, data: { data: [{ [m('units')]: '100' }] } }, 'Alpha alone');
    if (echoed.ok) {
      t.same(
        echoed.data.query.filters,
        [both, { or: [title('Alpha')] }, orgIs('equals', org)],
        'echo: the rewritten query, the stripped filters gone, the injected organization last',
      );
    }
  },
);

t.test('queryAsync and queryPoll strip it as cube.query does', async (t) => {
  const query = {
    measures: [m('units')],
    dimensions: [m('currency')],
    filters: [both, { or: [orgIs('equals', other), title('Echo')] }, orgIs('notEquals', org)],
    order: { [m('currency')]: 'asc' },
  };
  const submitted: Outcome<any> = await owner.client.mutate('cube.queryAsync', {
    organizationId: org,
    query,
  });
  t.match(submitted, { ok: true });
  let answer: any =
    submitted.ok && submitted.data.status === 'completed' ? submitted.data.data : undefined;
  for (let i = 0; answer === undefined && i < 400; i++) {
    const res: Outcome<any> = await owner.client.mutate('cube.queryPoll', {
      organizationId: org,
      query,
    });
    if (!res.ok) throw new Error(JSON.stringify(res.error));
    if (res.data.status === 'completed') answer = res.data.data;
    else await new Promise((r) => setTimeout(r, 25));
  }
  const sync = await cube({ ...query, filters: [both, title('Echo')] });
  t.match(sync, { ok: true });
  t.same(
    answer.data,
    sync.ok && sync.data.data,
    'the rows of the query without the organization filters',
  );
  t.same(answer.data, [{ [m('currency')]: 'USD', [m('units')]: '1000' }]);
  t.same(answer.query.filters, [both, { or: [title('Echo')] }, orgIs('equals', org)]);
});

t.test('no organization filter reaches another tenant', async (t) => {
  const res = await cube({
    measures: [m('units')],
    dimensions: [m('organization_id')],
    filters: [both, { or: [orgIs('equals', other), orgIs('notEquals', org), orgIs('set')] }],
  });
  t.match(res, {
    ok: true,
    data: { data: [{ [m('organization_id')]: org, [m('units')]: '1618' }] },
  });
});

t.test('the rightsholder filter must name rightsholders on every path', async (t) => {
  const rh = (operator: string, ...values: (string | null)[]) => ({
    member: m('rightsholder_id'),
    operator,
    ...(values.length ? { values } : {}),
  });
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
    [
      {
        or: [rh('equals', ds.rh1), { member: m('currency'), operator: 'equals', values: ['EUR'] }],
      },
    ],
    [{ or: [rh('equals', ds.rh1), { and: [rh('notEquals', ds.rh1)] }] }],
    [{ and: [{ member: m('currency'), operator: 'set' }] }, rh('set')],
    [{ or: [orgIs('equals', org)] }, orgIs('set')],
  ];
  for (const filters of refused) {
    const res = await cube({ measures: [m('units')], filters });
    t.match(
      res,
      {
        ok: false,
        error: {
          data: { code: 'BAD_REQUEST', errorCode: 'RIGHTSHOLDER_FILTER_REQUIRED', httpStatus: 400 },
        },
      },
      JSON.stringify(filters),
    );
  }
  const accepted: [object[], string][] = [
    [[rh('equals', ds.rh1)], '1611'],
    [[rh('equals', ds.rh2.toUpperCase())], '7'],
    [[rh('equals', ds.rh2, null)], '7'],
    [[rh('equals', ds.rh1), rh('notEquals', ds.rh1)], '0'],
    [[rh('notEquals', ds.rh1), { and: [rh('equals', ds.rh1, ds.rh2)] }], '7'],
    [
      [
        {
          or: [
            rh('equals', ds.rh2),
            {
              and: [
                rh('equals', ds.rh1),
                { member: m('currency'), operator: 'equals', values: ['USD'] },
              ],
            },
          ],
        },
      ],
      '1507',
    ],
    [[{ or: [rh('equals', ds.rh1), orgIs('equals', org)] }], '1611'],
  ];
  for (const [filters, units] of accepted) {
    const res = await cube({ measures: [m('units')], filters });
    t.match(
      res,
      { ok: true, data: { data: [{ [m('units')]: units === '0' ? null : units }] } },
      JSON.stringify(filters),
    );
  }
});
