// rightsholder.getById: visibility by organization and data-access role.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const a = await createRightsholder(t, owner, 'Artist A', { aliases: ['A'] });
const b = await createRightsholder(t, owner, 'Artist B');

t.test('any member reads a rightsholder by id', async (t) => {
  for (const role of ['member', 'reader', 'writer', 'admin'] as const) {
    const m = await addMember(srv, org, role);
    t.same(
      ok(t, await m.client.query('rightsholder.getById', { organizationId: org, id: a.id })),
      a,
      role,
    );
  }
});

t.test('unknown ids and ids of another organization are NOT_FOUND, leaking nothing', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Their Artist');
  for (const id of [UNKNOWN_ID, theirs.id]) {
    const res = await owner.client.query('rightsholder.getById', { organizationId: org, id });
    isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND', id);
    t.notMatch(JSON.stringify(res), /Their Artist/);
  }
  // the other organization's own members see theirs
  t.equal(
    ok(
      t,
      await other.client.query('rightsholder.getById', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Their Artist',
  );
  // a caller outside the organization is refused before anything is looked up
  const stranger = await outsider(srv, org);
  isError(
    t,
    await stranger.client.query('rightsholder.getById', { organizationId: org, id: a.id }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
});

t.test('a member restricted by a data-access role sees only their rightsholders', async (t) => {
  const restricted = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
    [org, restricted.userId, [a.id]],
  );
  t.same(
    ok(t, await restricted.client.query('rightsholder.getById', { organizationId: org, id: a.id })),
    a,
  );
  const res = await restricted.client.query('rightsholder.getById', {
    organizationId: org,
    id: b.id,
  });
  isError(t, res, 'NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND');
  t.notMatch(JSON.stringify(res), /Artist B/);

  const all = await addMember(srv, org, 'member');
  await srv.deps.pool.query(
    `INSERT INTO data_access_roles (organization_id, user_id, mode) VALUES ($1, $2, 'all')`,
    [org, all.userId],
  );
  t.equal(
    ok(t, await all.client.query('rightsholder.getById', { organizationId: org, id: b.id })).name,
    'Artist B',
  );
});

t.test('a soft-deleted rightsholder is still found by id, flagged', async (t) => {
  const c = await createRightsholder(t, owner, 'Artist C');
  ok(
    t,
    await owner.client.mutate('rightsholder.updateById', {
      organizationId: org,
      id: c.id,
      name: 'Artist C',
      isDeleted: true,
    }),
  );
  t.equal(
    ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: c.id }))
      .isDeleted,
    true,
  );
});

t.test('bad ids are BAD_REQUEST, never a 500', async (t) => {
  for (const id of ['not-a-uuid', "1' OR '1'='1", '', 42, null]) {
    isError(
      t,
      await owner.client.queryUnchecked('rightsholder.getById', { organizationId: org, id }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      String(id),
    );
  }
});
