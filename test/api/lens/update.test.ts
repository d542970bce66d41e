// lens.update: partial changes, ownership of personal lenses, making a lens personal, activity.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, deepJson, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');
const update = (caller: typeof owner, input: Record<string, unknown>) =>
  caller.client.mutateUnchecked('lens.update', { organizationId: org, ...input });

t.test('changes the given fields, keeps the rest, records field-level changes', async (t) => {
  const lens = await createLens(t, writer, {
    name: 'Old',
    description: 'd',
    tags: ['a'],
    viewName: 'v1',
    payload: { x: 1 },
  });
  const updated = ok(
    t,
    await update(writer, { id: lens.id, name: 'New', tags: ['b', 'b'], payload: { x: 2 } }),
  );
  t.same(
    { ...updated, updatedAt: undefined },
    { ...lens, name: 'New', tags: ['b'], payload: { x: 2 }, updatedAt: undefined },
  );
  t.ok(updated.updatedAt > lens.updatedAt);
  const history = ok(
    t,
    await owner.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: lens.id,
    }),
  );
  t.same(
    history.data.map((e: any) => [e.action, e.changes]),
    [
      [
        'lens.update',
        {
          name: { before: 'Old', after: 'New' },
          tags: { before: ['a'], after: ['b'] },
          payload: { before: { x: 1 }, after: { x: 2 } },
        },
      ],
      ['lens.create', null],
    ],
  );
  const cleared = ok(t, await update(writer, { id: lens.id, description: null, viewName: null }));
  t.same([cleared.description, cleared.viewName], [null, null]);
  const same = ok(t, await update(writer, { id: lens.id, name: 'New' }));
  t.equal(same.updatedAt, cleared.updatedAt, 'a change of nothing writes nothing');
});

t.test('any writer changes an organization lens', async (t) => {
  const lens = await createLens(t, writer, { name: 'Shared' });
  const admin = await addMember(srv, org, 'admin');
  t.equal(ok(t, await update(admin, { id: lens.id, name: 'By admin' })).name, 'By admin');
  t.equal(ok(t, await update(owner, { id: lens.id, name: 'By owner' })).name, 'By owner');
});

t.test('a personal lens is changed by its owner alone; to others it does not exist', async (t) => {
  const lens = await createLens(t, writer, { name: 'Mine', scope: 'personal' });
  t.equal(ok(t, await update(writer, { id: lens.id, name: 'Still mine' })).name, 'Still mine');
  const res = await update(owner, { id: lens.id, name: 'Taken' });
  isError(t, res, 'NOT_FOUND', 'LENS_NOT_FOUND');
  t.notMatch(JSON.stringify(res), /mine/i);
  t.equal(
    ok(t, await writer.client.query('lens.get', { organizationId: org, id: lens.id })).name,
    'Still mine',
  );
});

t.test(
  'scope changes: the owner shares and unshares; nobody else may make a lens personal',
  async (t) => {
    const lens = await createLens(t, writer, { name: 'Draft', scope: 'personal' });
    t.equal(
      ok(t, await update(writer, { id: lens.id, scope: 'organization' })).scope,
      'organization',
    );
    t.equal(
      ok(t, await owner.client.query('lens.get', { organizationId: org, id: lens.id })).name,
      'Draft',
      'now everybody sees it',
    );
    isError(
      t,
      await update(owner, { id: lens.id, scope: 'personal' }),
      'FORBIDDEN',
      'LENS_NOT_OWNER',
    );
    t.equal(
      ok(t, await owner.client.query('lens.get', { organizationId: org, id: lens.id })).scope,
      'organization',
      'unchanged',
    );
    t.equal(ok(t, await update(writer, { id: lens.id, scope: 'personal' })).scope, 'personal');
    isError(
      t,
      await owner.client.query('lens.get', { organizationId: org, id: lens.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    // the change to personal is the owner's business alone from then on
    const otherFeed = ok(
      t,
      await owner.client.query('activity.feed', {
        organizationId: org,
        subjectType: 'lens',
        limit: 2000,
      }),
    );
    t.same(
      otherFeed.data
        .filter((e: any) => e.subjectId === lens.id)
        .map((e: any) => e.changes?.scope?.after),
      ['organization'],
      'others see the sharing, not what happened while it was personal',
    );
  },
);

t.test('unknown ids, other organizations and invalid input', async (t) => {
  isError(t, await update(owner, { id: UNKNOWN_ID, name: 'X' }), 'NOT_FOUND', 'LENS_NOT_FOUND');
  const other = await newOrganization(srv, 'Other');
  const theirs = await createLens(t, other, { name: 'Theirs' });
  isError(
    t,
    await update(owner, { id: theirs.id, name: 'Hijacked' }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  t.equal(
    ok(
      t,
      await other.client.query('lens.get', { organizationId: other.organizationId, id: theirs.id }),
    ).name,
    'Theirs',
  );
  const lens = await createLens(t, owner, { name: 'Valid' });
  const cases: [string, Record<string, unknown>][] = [
    ['null payload', { payload: null }],
    ['deep payload', { payload: deepJson(50) }],
    ['bad scope', { scope: 'world' }],
    ['blank name', { name: '' }],
    ['tags not a list', { tags: 'a,b' }],
  ];
  for (const [label, input] of cases)
    isError(
      t,
      await update(owner, { id: lens.id, ...input }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  t.equal(
    ok(t, await update(owner, { id: lens.id, kind: 'flow' })).kind,
    'query',
    'kind is not changeable: the field is ignored',
  );
});

t.test('the same JSON sent again, its keys in another order, is no change', async (t) => {
  // PostgreSQL's jsonb keeps keys in its own order (shorter first), not the order sent: a client
  // saving the whole lens back must not make a change, an updatedAt or an event out of nothing
  const payload = {
    measures: ['earnings'],
    dimensions: ['territory'],
    filters: [{ member: 'source', operator: 'equals', values: ['x'] }],
  };
  const description = { text: 'Quarterly', author: 'me' };
  const viewName = { schema: 'analytics', name: 'full' };
  const lens = await createLens(t, writer, { name: 'Ordered', payload, description, viewName });
  const reordered = {
    filters: [{ values: ['x'], operator: 'equals', member: 'source' }],
    dimensions: ['territory'],
    measures: ['earnings'],
  };
  const same = ok(
    t,
    await update(writer, {
      id: lens.id,
      payload: reordered,
      description: { author: 'me', text: 'Quarterly' },
      viewName: { name: 'full', schema: 'analytics' },
      name: 'Ordered',
    }),
  );
  t.equal(same.updatedAt, lens.updatedAt, 'nothing written');
  const history = ok(
    t,
    await writer.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: lens.id,
    }),
  );
  t.same(
    history.data.map((e: any) => e.action),
    ['lens.create'],
    'no event',
  );
  // a real change among them is still one, and only it is recorded
  const changed = ok(
    t,
    await update(writer, {
      id: lens.id,
      payload: { ...reordered, measures: ['units'] },
      description: { author: 'me', text: 'Quarterly' },
    }),
  );
  t.same(changed.payload, { ...payload, measures: ['units'] });
  const after = ok(
    t,
    await writer.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'lens',
      subjectId: lens.id,
    }),
  );
  t.same(Object.keys(after.data[0]!.changes!), ['payload']);
});
