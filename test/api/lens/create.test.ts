// lens.create: every field and allowed value, defaults, roles, activity, hostile input.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { createLens, deepJson } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('creates a lens with every field', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  const input = {
    organizationId: org,
    name: ' Revenue by territory ',
    description: { text: 'Quarterly', links: [1, 2] },
    scope: 'personal',
    tags: ['finance', ' q1 ', 'finance'],
    kind: 'pivot',
    viewName: 'analytics_full_view',
    payload: {
      measures: ['net_earnings'],
      dimensions: ['country'],
      filters: [{ member: 'year', operator: 'equals', values: ['2024'] }],
    },
  };
  const lens = ok(t, await writer.client.mutate('lens.create', input));
  t.same(
    { ...lens, id: undefined, createdAt: undefined, updatedAt: undefined },
    {
      id: undefined,
      organizationId: org,
      name: 'Revenue by territory',
      description: input.description,
      scope: 'personal',
      tags: ['finance', 'q1'],
      kind: 'pivot',
      viewName: 'analytics_full_view',
      payload: input.payload,
      pinned: false,
      ownerUserId: writer.userId,
      createdAt: undefined,
      updatedAt: undefined,
      lastOpenedAt: null,
    },
  );
  t.same(ok(t, await writer.client.query('lens.get', { organizationId: org, id: lens.id })), lens);
});

t.test('defaults: scope organization, no tags, no description or viewName', async (t) => {
  const lens = ok(
    t,
    await owner.client.mutate('lens.create', {
      organizationId: org,
      name: 'Plain',
      kind: 'query',
      payload: [1, 'two', null],
    }),
  );
  t.match(lens, {
    scope: 'organization',
    tags: [],
    description: null,
    viewName: null,
    payload: [1, 'two', null],
  });
});

t.test('every kind is accepted; anything else is not', async (t) => {
  for (const kind of ['query', 'pivot', 'funnel', 'flow', 'retention', 'drill_down', 'valuation']) {
    t.equal((await createLens(t, owner, { kind, name: kind })).kind, kind);
  }
  for (const kind of ['chart', '', 'QUERY', null]) {
    isError(
      t,
      await owner.client.mutate('lens.create', {
        organizationId: org,
        name: 'x',
        kind,
        payload: {},
      }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      String(kind),
    );
  }
  isError(
    t,
    await owner.client.mutate('lens.create', {
      organizationId: org,
      name: 'x',
      kind: 'query',
      payload: {},
      scope: 'team',
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('any JSON value for description, viewName and payload', async (t) => {
  for (const value of ['text', 42, true, ['a', { b: 1 }], { nested: { deeper: [1] } }]) {
    const lens = await createLens(t, owner, {
      description: value,
      viewName: value,
      payload: value,
    });
    t.same(
      [lens.description, lens.viewName, lens.payload],
      [value, value, value],
      JSON.stringify(value),
    );
  }
});

t.test('records the creation; a personal lens only for its owner', async (t) => {
  const shared = await createLens(t, owner, { name: 'Shared One' });
  const mine = await createLens(t, owner, { name: 'Secret One', scope: 'personal' });
  const other = await addMember(srv, org, 'admin');
  const ownerFeed = ok(
    t,
    await owner.client.query('activity.feed', {
      organizationId: org,
      subjectType: 'lens',
      limit: 2,
    }),
  );
  t.same(
    ownerFeed.data.map((e: any) => [e.action, e.subjectId, e.subjectLabel]),
    [
      ['lens.create', mine.id, 'Secret One'],
      ['lens.create', shared.id, 'Shared One'],
    ],
  );
  const otherFeed = ok(
    t,
    await other.client.query('activity.feed', {
      organizationId: org,
      subjectType: 'lens',
      limit: 2000,
    }),
  );
  t.notOk(
    otherFeed.data.some((e: any) => e.subjectId === mine.id),
    "another member does not see the personal lens's events",
  );
  t.ok(otherFeed.data.some((e: any) => e.subjectId === shared.id));
});

t.test('invalid and hostile input is BAD_REQUEST, never a 500', async (t) => {
  const base = { organizationId: org, name: 'x', kind: 'query', payload: {} };
  const cases: [string, Record<string, unknown>][] = [
    ['no payload', { payload: undefined }],
    ['null payload', { payload: null }],
    ['no name', { name: undefined }],
    ['blank name', { name: '  ' }],
    ['name too long', { name: 'n'.repeat(201) }],
    ['no kind', { kind: undefined }],
    ['deep payload', { payload: deepJson(40) }],
    ['huge payload', { payload: { blob: 'x'.repeat(100_001) } }],
    ['huge description', { description: 'x'.repeat(10_001) }],
    ['NUL in payload', { payload: { a: 'b\u0000' } }],
    ['NUL in a key', { payload: { 'k\u0000': 1 } }],
    ['NUL in name', { name: 'a\u0000' }],
    ['too many tags', { tags: Array.from({ length: 51 }, (_, i) => `t${i}`) }],
    ['blank tag', { tags: [' '] }],
    ['tag not a string', { tags: [1] }],
  ];
  for (const [label, input] of cases) {
    isError(
      t,
      await owner.client.mutate('lens.create', { ...base, ...input }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
  // nested deeper than JSON.stringify's stack allows (V8 parses it; the body is well under 1 MB):
  // a field error like any other, not a stack overflow reported as a bare BAD_REQUEST
  for (const field of ['payload', 'description', 'viewName']) {
    const deep = '['.repeat(20_000) + ']'.repeat(20_000);
    const body = `{"0":{"organizationId":"${org}","name":"deep","kind":"query","payload":{},"${field}":${deep}}}`;
    const res = await owner.client.raw('POST', '/trpc/lens.create?batch=1', body);
    t.equal(res.status, 400, field);
    t.match(
      res.body[0].error.data,
      { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED', fields: [{ path: field }] },
      field,
    );
  }
  const sql = await createLens(t, owner, {
    name: "x'); DROP TABLE lenses; --",
    tags: ["' OR 1=1 --"],
    payload: { sql: 'SELECT * FROM users' },
  });
  t.equal(sql.name, "x'); DROP TABLE lenses; --");
  t.same(sql.tags, ["' OR 1=1 --"]);
});
