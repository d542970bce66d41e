// activity.byEntity: one subject's events, newest first, by cursor.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, createRightsholder, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const byEntity = (caller: typeof owner, input: Record<string, unknown>) =>
  caller.client.queryUnchecked('activity.byEntity', { organizationId: org, ...input });

t.test("a rightsholder's history, newest first, paged by cursor", async (t) => {
  const r = await createRightsholder(t, owner, 'v0');
  const other = await createRightsholder(t, owner, 'unrelated');
  for (let i = 1; i <= 4; i++)
    ok(
      t,
      await owner.client.mutate('rightsholder.updateById', {
        organizationId: org,
        id: r.id,
        name: `v${i}`,
      }),
    );
  const all = ok(t, await byEntity(owner, { subjectType: 'rightsholder', subjectId: r.id }));
  t.same(
    all.data.map((e: any) => e.subjectLabel),
    ['v4', 'v3', 'v2', 'v1', 'v0'],
  );
  t.notOk(all.data.some((e: any) => e.subjectId === other.id));
  t.equal(all.nextCursor, null);

  const p1 = ok(
    t,
    await byEntity(owner, { subjectType: 'rightsholder', subjectId: r.id, limit: 2 }),
  );
  t.same(
    p1.data.map((e: any) => e.subjectLabel),
    ['v4', 'v3'],
  );
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'v5',
    }),
  );
  const p2 = ok(
    t,
    await byEntity(owner, {
      subjectType: 'rightsholder',
      subjectId: r.id,
      limit: 2,
      cursor: p1.nextCursor,
    }),
  );
  t.same(
    p2.data.map((e: any) => e.subjectLabel),
    ['v2', 'v1'],
    'a new event does not shift the next page',
  );
  const p3 = ok(
    t,
    await byEntity(owner, {
      subjectType: 'rightsholder',
      subjectId: r.id,
      limit: 2,
      cursor: p2.nextCursor,
    }),
  );
  t.same(
    p3.data.map((e: any) => e.subjectLabel),
    ['v0'],
  );
  t.equal(p3.nextCursor, null);
  t.equal(
    ok(t, await byEntity(owner, { subjectType: 'rightsholder', subjectId: r.id, limit: 2000 })).data
      .length,
    6,
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'rightsholder', subjectId: r.id, limit: 2001 }),
    'BAD_REQUEST',
    'PAGINATION_LIMIT_EXCEEDED',
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'rightsholder', subjectId: r.id, cursor: 'zzz' }),
    'BAD_REQUEST',
    'INVALID_CURSOR',
  );
});

t.test('a subject with no events yet has an empty history', async (t) => {
  const o = await newOrganization(srv, 'Quiet');
  await srv.deps.pool.query(
    `INSERT INTO rightsholders (organization_id, name) VALUES ($1, 'Silent')`,
    [o.organizationId],
  );
  const { rows } = await srv.deps.pool.query<{ id: string }>(
    `SELECT id FROM rightsholders WHERE organization_id = $1`,
    [o.organizationId],
  );
  t.same(
    ok(
      t,
      await o.client.query('activity.byEntity', {
        organizationId: o.organizationId,
        subjectType: 'rightsholder',
        subjectId: rows[0]!.id,
      }),
    ),
    {
      data: [],
      nextCursor: null,
    },
  );
});

t.test(
  'ids of other organizations and unknown subjects are NOT_FOUND, leaking nothing',
  async (t) => {
    const other = await newOrganization(srv, 'Other');
    const theirs = await createRightsholder(t, other, 'Their Artist');
    const theirLens = await createLens(t, other, { name: 'Their Lens' });
    const res = await byEntity(owner, { subjectType: 'rightsholder', subjectId: theirs.id });
    isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
    t.notMatch(JSON.stringify(res), /Their Artist/);
    isError(
      t,
      await byEntity(owner, { subjectType: 'lens', subjectId: theirLens.id }),
      'NOT_FOUND',
      'LENS_NOT_FOUND',
    );
    isError(
      t,
      await byEntity(owner, { subjectType: 'rightsholder', subjectId: UNKNOWN_ID }),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
    );
    isError(
      t,
      await byEntity(owner, { subjectType: 'rightsholder', subjectId: 'not-a-uuid' }),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
    );
    isError(
      t,
      await byEntity(owner, { subjectType: 'upload', subjectId: 'nothing-here' }),
      'NOT_FOUND',
      'ACTIVITY_SUBJECT_NOT_FOUND',
    );
  },
);

t.test('subjects this service does not keep yet are known by their history', async (t) => {
  await srv.deps.pool.query(
    `INSERT INTO activity_events (organization_id, actor_user_id, action, subject_type, subject_id, subject_label) VALUES ($1, $2, 'upload.uploadFile', 'upload', 'u-1', 'statement.csv')`,
    [org, owner.userId],
  );
  const res = ok(t, await byEntity(owner, { subjectType: 'upload', subjectId: 'u-1' }));
  t.same(
    res.data.map((e: any) => [e.action, e.subjectLabel]),
    [['upload.uploadFile', 'statement.csv']],
  );
});

t.test('an id in capitals names the same subject, of every type', async (t) => {
  const product = '5f0c2a9e-3b1d-4c8e-9a7f-1e2d3c4b5a69';
  await srv.deps.pool.query(
    `INSERT INTO activity_events (organization_id, actor_user_id, action, subject_type, subject_id, subject_label) VALUES ($1, $2, 'product.updateById', 'product', $3, 'Song')`,
    [org, owner.userId, product],
  );
  const member = await addMember(srv, org, 'member');
  ok(
    t,
    await owner.client.mutate('organization.updateRole', {
      organizationId: org,
      userId: member.userId,
      role: 'writer',
    }),
  );
  for (const [subjectType, subjectId, action] of [
    ['product', product, 'product.updateById'],
    ['user', member.userId, 'organization.updateRole'],
  ] as const) {
    const res = ok(t, await byEntity(owner, { subjectType, subjectId: subjectId.toUpperCase() }));
    t.same(
      res.data.map((e: any) => [e.action, e.subjectId]),
      [[action, subjectId]],
      subjectType,
    );
  }
});

t.test("a restricted member and another member's personal lens: NOT_FOUND", async (t) => {
  const r = await createRightsholder(t, owner, 'Restricted Artist');
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
    [org, restricted.userId],
  );
  isError(
    t,
    await byEntity(restricted, { subjectType: 'rightsholder', subjectId: r.id }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  const writer = await addMember(srv, org, 'writer');
  const secret = await createLens(t, writer, { name: 'Secret', scope: 'personal' });
  isError(
    t,
    await byEntity(owner, { subjectType: 'lens', subjectId: secret.id }),
    'NOT_FOUND',
    'LENS_NOT_FOUND',
  );
  t.equal(
    ok(t, await byEntity(writer, { subjectType: 'lens', subjectId: secret.id })).data.length,
    1,
  );
});

t.test('invalid input is BAD_REQUEST', async (t) => {
  isError(
    t,
    await byEntity(owner, { subjectId: 'x' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'no subjectType',
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'rightsholder' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'no subjectId',
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'rightsholder', subjectId: '' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'empty subjectId',
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'rightsholder', subjectId: 'x'.repeat(201) }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'long subjectId',
  );
  isError(
    t,
    await byEntity(owner, { subjectType: 'upload', subjectId: 'a\u0000' }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'NUL',
  );
});
