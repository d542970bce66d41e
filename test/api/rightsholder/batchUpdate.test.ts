// rightsholder.batchUpdate: all updates in one transaction or none.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

const get = async (t: Parameters<typeof ok>[0], id: string) =>
  ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id }));

t.test('applies every update and records each', async (t) => {
  const a = await createRightsholder(t, owner, 'Batch A');
  const b = await createRightsholder(t, owner, 'Batch B');
  const res = ok(
    t,
    await owner.client.mutate('rightsholder.batchUpdate', {
      organizationId: org,
      updates: [
        { id: a.id, legalName: 'A Ltd', isPublisherGroup: true },
        { id: b.id, name: 'Batch B2', aliases: ['bb'] },
        { id: a.id, isDeleted: true },
      ],
    }),
  );
  t.equal(res.data.length, 3);
  t.match(await get(t, a.id), {
    name: 'Batch A',
    legalName: 'A Ltd',
    isPublisherGroup: true,
    isDeleted: true,
  });
  t.match(await get(t, b.id), { name: 'Batch B2', aliases: ['bb'] });
  t.same(res.data[2], await get(t, a.id), 'the last update of an id returns its final state');
  const feed = ok(
    t,
    await owner.client.query('activity.feed', {
      organizationId: org,
      action: 'rightsholder.batchUpdate',
    }),
  );
  t.same(
    feed.data.map((e: any) => [e.subjectId, e.changes]),
    [
      [a.id, { isDeleted: { before: false, after: true } }],
      [
        b.id,
        { name: { before: 'Batch B', after: 'Batch B2' }, aliases: { before: [], after: ['bb'] } },
      ],
      [
        a.id,
        {
          legalName: { before: null, after: 'A Ltd' },
          isPublisherGroup: { before: false, after: true },
        },
      ],
    ],
  );
});

t.test('one failing update rolls back all of them, and names its index', async (t) => {
  const a = await createRightsholder(t, owner, 'Atomic A');
  const b = await createRightsholder(t, owner, 'Atomic B');
  const eventsBefore = ok(
    t,
    await owner.client.query('activity.feed', { organizationId: org, limit: 2000 }),
  ).data.length;

  const conflict = await owner.client.mutate('rightsholder.batchUpdate', {
    organizationId: org,
    updates: [
      { id: a.id, name: 'Atomic A2' },
      { id: b.id, name: 'atomic a2' },
    ],
  });
  isError(t, conflict, 'CONFLICT', 'RIGHTSHOLDER_NAME_TAKEN');
  if (!conflict.ok) t.same((conflict.error.data as any).details, { index: 1 });
  t.equal((await get(t, a.id)).name, 'Atomic A', 'the first update was rolled back');

  const missing = await owner.client.mutate('rightsholder.batchUpdate', {
    organizationId: org,
    updates: [
      { id: a.id, name: 'Atomic A3' },
      { id: UNKNOWN_ID, name: 'Nobody' },
    ],
  });
  isError(t, missing, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
  if (!missing.ok) t.same((missing.error.data as any).details, { index: 1 });
  t.equal((await get(t, a.id)).name, 'Atomic A');
  t.equal(
    ok(t, await owner.client.query('activity.feed', { organizationId: org, limit: 2000 })).data
      .length,
    eventsBefore,
    'no events either',
  );
});

t.test('ids of another organization are NOT_FOUND and untouched', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  isError(
    t,
    await owner.client.mutate('rightsholder.batchUpdate', {
      organizationId: org,
      updates: [{ id: theirs.id, name: 'Mine' }],
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  t.equal(
    ok(
      t,
      await other.client.query('rightsholder.getById', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Theirs',
  );
});

t.test(
  'roles: members and up, as the specification states, within their data access',
  async (t) => {
    const r = await createRightsholder(t, owner, 'Role Target');
    for (const role of ['member', 'reader'] as const) {
      const m = await addMember(srv, org, role);
      ok(
        t,
        await m.client.mutate('rightsholder.batchUpdate', {
          organizationId: org,
          updates: [{ id: r.id, name: `By ${role}` }],
        }),
      );
      t.equal((await get(t, r.id)).name, `By ${role}`);
    }
    const writer = await addMember(srv, org, 'writer');
    ok(
      t,
      await writer.client.mutate('rightsholder.batchUpdate', {
        organizationId: org,
        updates: [{ id: r.id, name: 'By Writer' }],
      }),
    );
    t.equal((await get(t, r.id)).name, 'By Writer');

    const restricted = await addMember(srv, org, 'writer');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
      [org, restricted.userId],
    );
    isError(
      t,
      await restricted.client.mutate('rightsholder.batchUpdate', {
        organizationId: org,
        updates: [{ id: r.id, name: 'X' }],
      }),
      'NOT_FOUND',
      'RIGHTSHOLDER_NOT_FOUND',
    );
  },
);

t.test('invalid batches are BAD_REQUEST', async (t) => {
  const r = await createRightsholder(t, owner, 'Valid Batch');
  const cases: [string, unknown][] = [
    ['missing', undefined],
    ['empty', []],
    ['not an array', { id: r.id }],
    ['too many', Array.from({ length: 501 }, () => ({ id: r.id }))],
    ['item without id', [{ name: 'X' }]],
    ['item not an object', ['x']],
    ['bad field', [{ id: r.id, isDeleted: 'no' }]],
  ];
  for (const [label, updates] of cases) {
    isError(
      t,
      await owner.client.mutateUnchecked('rightsholder.batchUpdate', {
        organizationId: org,
        updates,
      }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
});
