// rightsholder.updateById: every field, soft delete, the unique name, roles, visibility and the
// field-level activity record.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder, deepJson, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const writer = await addMember(srv, org, 'writer');

t.test('updates every listed field and records the caller', async (t) => {
  const r = await createRightsholder(t, owner, 'Before');
  const updated = ok(
    t,
    await writer.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'After',
      legalName: 'After Music GmbH',
      aliases: ['Aft'],
      ipiNameNumbers: ['00052210040'],
      isnis: ['0000000121464389'],
      streamingArtistIds: ['s1'],
      storeArtistIds: ['st1', 'st2'],
      videoChannelIds: ['v1'],
      isPublisherGroup: true,
      lastUpdatedById: owner.userId,
      isDeleted: false,
    }),
  );
  t.same(
    { ...updated, updatedAt: undefined },
    {
      ...r,
      name: 'After',
      legalName: 'After Music GmbH',
      aliases: ['Aft'],
      ipiNameNumbers: ['00052210040'],
      isnis: ['0000000121464389'],
      streamingArtistIds: ['s1'],
      storeArtistIds: ['st1', 'st2'],
      videoChannelIds: ['v1'],
      isPublisherGroup: true,
      // the server records the caller, whatever the input says
      lastUpdatedById: writer.userId,
      updatedAt: undefined,
    },
  );
  t.ok(updated.updatedAt > r.updatedAt);
  t.same(
    ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id })),
    updated,
  );

  const history = ok(
    t,
    await owner.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: r.id,
    }),
  );
  t.equal(history.data.length, 2);
  t.same(history.data[0]!.changes, {
    name: { before: 'Before', after: 'After' },
    legalName: { before: null, after: 'After Music GmbH' },
    aliases: { before: [], after: ['Aft'] },
    ipiNameNumbers: { before: [], after: ['00052210040'] },
    isnis: { before: [], after: ['0000000121464389'] },
    streamingArtistIds: { before: [], after: ['s1'] },
    storeArtistIds: { before: [], after: ['st1', 'st2'] },
    videoChannelIds: { before: [], after: ['v1'] },
    isPublisherGroup: { before: false, after: true },
  });
  t.match(history.data[0], {
    action: 'rightsholder.updateById',
    subjectLabel: 'After',
    actor: { userId: writer.userId, email: writer.email },
  });
});

t.test('omitted fields stay; null clears legalName and lists', async (t) => {
  const r = await createRightsholder(t, owner, 'Keep', { legalName: 'Keep Ltd', aliases: ['K'] });
  const same = ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'Keep',
    }),
  );
  t.same(same, r, 'a change of nothing writes nothing');
  const cleared = ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'Keep',
      legalName: null,
      aliases: null,
    }),
  );
  t.equal(cleared.legalName, null);
  t.same(cleared.aliases, []);
  const history = ok(
    t,
    await owner.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'rightsholder',
      subjectId: r.id,
    }),
  );
  t.same(
    history.data.map((e: any) => e.action),
    ['rightsholder.updateById', 'rightsholder.create'],
    'the no-op update recorded nothing',
  );
});

t.test('isDeleted soft-deletes and restores', async (t) => {
  const r = await createRightsholder(t, owner, 'Soft');
  const deleted = ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'Soft',
      isDeleted: true,
    }),
  );
  t.equal(deleted.isDeleted, true);
  const listed = ok(
    t,
    await owner.client.query('rightsholder.list', { organizationId: org, search: 'Soft' }),
  );
  t.same(listed.data, []);
  const withDeleted = ok(
    t,
    await owner.client.query('rightsholder.list', {
      organizationId: org,
      search: 'Soft',
      includeDeleted: true,
    }),
  );
  t.same(
    withDeleted.data.map((x: any) => x.id),
    [r.id],
  );
  const restored = ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'Soft',
      isDeleted: false,
    }),
  );
  t.equal(restored.isDeleted, false);
  t.equal(
    ok(t, await owner.client.query('rightsholder.list', { organizationId: org, search: 'Soft' }))
      .data.length,
    1,
  );
});

t.test(
  'renaming onto another name is CONFLICT; changing only the case of its own name is fine',
  async (t) => {
    await createRightsholder(t, owner, 'Taken Name');
    const r = await createRightsholder(t, owner, 'Free Name');
    isError(
      t,
      await owner.client.mutate('rightsholder.updateById', {
        organizationId: org,
        id: r.id,
        name: ' taken name ',
      }),
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
    );
    t.equal(
      ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id }))
        .name,
      'Free Name',
      'unchanged',
    );
    t.equal(
      ok(
        t,
        await owner.client.mutate('rightsholder.updateById', {
          organizationId: org,
          id: r.id,
          name: 'FREE NAME',
        }),
      ).name,
      'FREE NAME',
    );
  },
);

t.test('roles, unknown ids, other organizations and data-access roles', async (t) => {
  const r = await createRightsholder(t, owner, 'Guarded');
  isError(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: UNKNOWN_ID,
      name: 'X',
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  const res = await owner.client.mutate('rightsholder.updateById', {
    organizationId: org,
    id: theirs.id,
    name: 'Hijacked',
  });
  isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
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

  const restricted = await addMember(srv, org, 'writer');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', '{}')`,
    [org, restricted.userId],
  );
  isError(
    t,
    await restricted.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: r.id,
      name: 'X',
    }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
});

t.test(
  'lastUpdatedById is any JSON value, accepted and ignored: the caller is recorded',
  async (t) => {
    const r = await createRightsholder(t, owner, 'Any Updater');
    for (const lastUpdatedById of ['me', 42, { id: 'someone' }, null, owner.userId]) {
      const updated = ok(
        t,
        await writer.client.mutate('rightsholder.updateById', {
          organizationId: org,
          id: r.id,
          name: 'Any Updater',
          legalName: JSON.stringify(lastUpdatedById),
          lastUpdatedById,
        }),
      );
      t.equal(updated.lastUpdatedById, writer.userId, JSON.stringify(lastUpdatedById));
    }
    const batch = ok(
      t,
      await writer.client.mutate('rightsholder.batchUpdate', {
        organizationId: org,
        updates: [{ id: r.id, legalName: 'Batch', lastUpdatedById: ['a', 1] }],
      }),
    );
    t.same(
      batch.data.map((x: any) => [x.legalName, x.lastUpdatedById]),
      [['Batch', writer.userId]],
    );
  },
);

t.test('invalid input is BAD_REQUEST', async (t) => {
  const r = await createRightsholder(t, owner, 'Valid');
  const cases: [string, Record<string, unknown>][] = [
    ['name missing', {}],
    ['name blank', { name: ' ' }],
    ['isDeleted not boolean', { name: 'Valid', isDeleted: 'true' }],
    ['lastUpdatedById too large', { name: 'Valid', lastUpdatedById: 'x'.repeat(2_000) }],
    ['deep JSON', { name: 'Valid', isnis: deepJson(100) }],
    ['legalName too long', { name: 'Valid', legalName: 'x'.repeat(501) }],
  ];
  for (const [label, input] of cases) {
    isError(
      t,
      await owner.client.mutateUnchecked('rightsholder.updateById', {
        organizationId: org,
        id: r.id,
        ...input,
      }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
});
