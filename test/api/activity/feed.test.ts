// activity.feed: the organization's events, newest first, by cursor, with filters; what a member
// may not see is left out.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, createRightsholder } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');
// unchecked: some cases send invalid input on purpose
const feed = (caller: typeof owner, input: Record<string, unknown> = {}) =>
  caller.client.queryUnchecked('activity.feed', { organizationId: org, ...input });

const rh = await createRightsholder(t, owner, 'Feed Artist');
ok(
  t,
  await writer.client.mutate('rightsholder.updateById', {
    organizationId: org,
    id: rh.id,
    name: 'Feed Artist 2',
  }),
);
const lens = await createLens(t, writer, { name: 'Feed Lens' });

t.test('events newest first with every field', async (t) => {
  const res = ok(t, await feed(owner));
  t.equal(res.nextCursor, null);
  t.equal(res.data.length, 3);
  const [created, updated, rhCreated] = res.data;
  t.same(Object.keys(created).sort(), [
    'action',
    'actor',
    'changes',
    'createdAt',
    'id',
    'subjectId',
    'subjectLabel',
    'subjectType',
  ]);
  t.match(created, {
    action: 'lens.create',
    subjectType: 'lens',
    subjectId: lens.id,
    subjectLabel: 'Feed Lens',
    changes: null,
    actor: { userId: writer.userId, email: writer.email },
  });
  t.same(
    { ...updated, id: undefined, createdAt: undefined },
    {
      id: undefined,
      action: 'rightsholder.updateById',
      subjectType: 'rightsholder',
      subjectId: rh.id,
      subjectLabel: 'Feed Artist 2',
      changes: { name: { before: 'Feed Artist', after: 'Feed Artist 2' } },
      actor: { userId: writer.userId, email: writer.email },
      createdAt: undefined,
    },
  );
  t.match(rhCreated, { action: 'rightsholder.create', actor: { userId: owner.userId } });
  t.ok(Number(created.id) > Number(updated.id) && Number(updated.id) > Number(rhCreated.id));
  t.ok(created.createdAt >= updated.createdAt);
  t.match(created.createdAt, /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
});

t.test('filters: subjectType, actorUserId, action', async (t) => {
  t.same(
    ok(t, await feed(owner, { subjectType: 'lens' })).data.map((e: any) => e.subjectId),
    [lens.id],
  );
  t.same(
    ok(t, await feed(owner, { actorUserId: owner.userId })).data.map((e: any) => e.action),
    ['rightsholder.create'],
  );
  t.same(ok(t, await feed(owner, { action: 'rightsholder.updateById' })).data.length, 1);
  t.same(ok(t, await feed(owner, { subjectType: 'upload' })), { data: [], nextCursor: null });
  isError(t, await feed(owner, { subjectType: 'planet' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await feed(owner, { actorUserId: 'me' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  t.same(ok(t, await feed(owner, { action: "'; DELETE FROM activity_events; --" })).data, []);
  t.equal(ok(t, await feed(owner)).data.length, 3, 'still there');
});

t.test('pages by cursor, stable under new events, with limit bounds', async (t) => {
  const o = await newOrganization(srv, 'Busy');
  for (let i = 0; i < 7; i++) await createRightsholder(t, o, `r${i}`);
  const read = (input: Record<string, unknown>) =>
    o.client.query('activity.feed', { organizationId: o.organizationId, ...input });
  const p1 = ok(t, await read({ limit: 3 }));
  t.same(
    p1.data.map((e: any) => e.subjectLabel),
    ['r6', 'r5', 'r4'],
  );
  await createRightsholder(t, o, 'inserted between pages');
  const p2 = ok(t, await read({ limit: 3, cursor: p1.nextCursor }));
  t.same(
    p2.data.map((e: any) => e.subjectLabel),
    ['r3', 'r2', 'r1'],
  );
  const p3 = ok(t, await read({ limit: 3, cursor: p2.nextCursor }));
  t.same(
    p3.data.map((e: any) => e.subjectLabel),
    ['r0'],
  );
  t.equal(p3.nextCursor, null, 'the last page has no cursor');
  const exact = ok(t, await read({ limit: 8 }));
  t.equal(exact.data.length, 8);
  t.equal(exact.nextCursor, null, 'an exact fit needs no further page');
  t.equal(ok(t, await read({})).data.length, 8, 'default limit 50');
  t.equal(ok(t, await read({ limit: 2000 })).data.length, 8);
  isError(t, await read({ limit: 2001 }), 'BAD_REQUEST', 'PAGINATION_LIMIT_EXCEEDED');
  isError(t, await read({ limit: 0 }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  for (const cursor of [
    'nonsense',
    b64([1]),
    b64(['-5']),
    b64(['1 OR 1=1']),
    b64(['99999999999999999999']),
    b64(['1', '2']),
  ]) {
    isError(t, await read({ cursor }), 'BAD_REQUEST', 'INVALID_CURSOR', cursor);
  }
  t.same(
    ok(t, await read({ cursor: b64(['1']) })),
    { data: [], nextCursor: null },
    'a cursor before the first event: an empty page',
  );
});

t.test('the default limit is 50', async (t) => {
  const o = await newOrganization(srv, 'Many');
  await srv.deps.pool.query(
    `INSERT INTO activity_events (organization_id, actor_user_id, action, subject_type, subject_id) SELECT $1, $2, 'test.event', 'user', i::text FROM generate_series(1, 60) i`,
    [o.organizationId, o.userId],
  );
  const res = ok(t, await o.client.query('activity.feed', { organizationId: o.organizationId }));
  t.equal(res.data.length, 50);
  t.type(res.nextCursor, 'string');
});

t.test(
  "what a member may not see: other organizations, others' personal lenses, rightsholders outside their data-access role",
  async (t) => {
    const other = await newOrganization(srv, 'Other');
    await createRightsholder(t, other, 'Foreign Artist');
    t.notMatch(JSON.stringify(ok(t, await feed(owner, { limit: 2000 }))), /Foreign Artist/);

    const secret = await createLens(t, writer, { name: 'Secret Lens', scope: 'personal' });
    t.notOk(
      ok(t, await feed(owner, { limit: 2000 })).data.some((e: any) => e.subjectId === secret.id),
    );
    t.ok(
      ok(t, await feed(writer, { limit: 2000 })).data.some((e: any) => e.subjectId === secret.id),
    );

    const restricted = await addMember(srv, org, 'member');
    const visible = await createRightsholder(t, owner, 'Visible Artist');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, restricted.userId, [visible.id]],
    );
    const seen = ok(t, await feed(restricted, { subjectType: 'rightsholder', limit: 2000 })).data;
    t.same(
      seen.map((e: any) => e.subjectLabel),
      ['Visible Artist'],
    );
  },
);

t.test('an actor whose account is gone shows as null', async (t) => {
  const temp = await addMember(srv, org, 'writer');
  const r = await createRightsholder(t, temp, 'Orphaned');
  await srv.deps.pool.query('DELETE FROM users WHERE id = $1', [temp.userId]);
  const res = ok(t, await feed(owner, { limit: 1 }));
  t.match(res.data[0], { subjectId: r.id, actor: null });
});
