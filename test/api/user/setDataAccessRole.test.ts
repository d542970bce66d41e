// user.setDataAccessRole: an admin sets which rightsholders a member sees.
import t from 'tap';
import { rightsholderScope } from '../../../src/access/dataAccess.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { queuedBehindOrganization } from '../../helpers/locks.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, insertRightsholder, MISSING_ID } from '../organization/helpers.ts';
import type { MutationPath } from '../../helpers/procedures.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const member = await addMember(srv, org, 'member');
const other = await newOrganization(srv, 'Other');
const r1 = await insertRightsholder(srv, org, 'One');
const r2 = await insertRightsholder(srv, org, 'Two');
const archived = await insertRightsholder(srv, org, 'Archived', { deleted: true });
const foreign = await insertRightsholder(srv, other.organizationId, 'Foreign');
const setRole = (role: unknown, userId = member.userId, client = admin.client) =>
  client.mutateUnchecked('user.setDataAccessRole', { organizationId: org, userId, role });

t.test('restricted, then all, in each accepted form', async (t) => {
  t.same(ok(t, await setRole({ mode: 'restricted', rightsholderIds: [r2, r1, r2] })), {
    userId: member.userId,
    dataAccessRole: { mode: 'restricted', rightsholderIds: [r2, r1] },
  });
  t.same(
    await rightsholderScope(srv.deps.pool, org, member.userId),
    [r2, r1],
    'enforced by the shared data-access check',
  );
  t.same(
    ok(t, await member.client.query('user.preferences', { organizationId: org })).dataAccessRole,
    { mode: 'restricted', rightsholderIds: [r2, r1] },
  );

  t.same(ok(t, await setRole('all')).dataAccessRole, { mode: 'all' });
  t.equal(await rightsholderScope(srv.deps.pool, org, member.userId), null);
  t.same(ok(t, await setRole({ mode: 'restricted', rightsholderIds: [] })).dataAccessRole, {
    mode: 'restricted',
    rightsholderIds: [],
  });
  t.same(
    await rightsholderScope(srv.deps.pool, org, member.userId),
    [],
    'restricted to nothing sees nothing',
  );
  t.same(ok(t, await setRole({ mode: 'all' })).dataAccessRole, { mode: 'all' });
  t.same(
    ok(t, await setRole({ mode: 'restricted', rightsholderIds: [archived] })).dataAccessRole
      .rightsholderIds,
    [archived],
    'a soft-deleted one may be named',
  );

  const events = await activities(srv, org, 'user.setDataAccessRole');
  t.equal(events.length, 5);
  t.match(events[0], {
    subjectType: 'user',
    subjectId: member.userId,
    subjectLabel: member.email,
    actorUserId: admin.userId,
    changes: {
      dataAccessRole: {
        before: { mode: 'all' },
        after: { mode: 'restricted', rightsholderIds: [r2, r1] },
      },
    },
  });
  ok(t, await setRole({ mode: 'restricted', rightsholderIds: [archived] }));
  t.equal((await activities(srv, org, 'user.setDataAccessRole')).length, 5, 'no change, no event');
});

t.test('rightsholders of another organization, or none: NOT_FOUND, nothing changed', async (t) => {
  ok(t, await setRole('all'));
  const error = isError(
    t,
    await setRole({ mode: 'restricted', rightsholderIds: [r1, foreign] }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  t.notMatch(JSON.stringify(error), /Foreign/);
  isError(
    t,
    await setRole({ mode: 'restricted', rightsholderIds: [MISSING_ID] }),
    'NOT_FOUND',
    'RIGHTSHOLDER_NOT_FOUND',
  );
  t.equal(await rightsholderScope(srv.deps.pool, org, member.userId), null);
});

t.test('a user of another organization, or none: NOT_FOUND', async (t) => {
  isError(t, await setRole('all', other.userId), 'NOT_FOUND', 'USER_NOT_FOUND');
  isError(t, await setRole('all', MISSING_ID), 'NOT_FOUND', 'USER_NOT_FOUND');
  t.equal(await rightsholderScope(srv.deps.pool, other.organizationId, other.userId), null);
});

t.test('guard rails: only admins, never on someone above them', async (t) => {
  isError(t, await setRole('all', owner.userId), 'FORBIDDEN', 'MEMBER_OUTRANKS_CALLER');
  const writer = await addMember(srv, org, 'writer');
  isError(t, await setRole('all', member.userId, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  ok(
    t,
    await setRole({ mode: 'restricted', rightsholderIds: [r1] }, admin.userId, owner.client),
    'an owner restricts an admin',
  );
});

t.test('validation and hostile input', async (t) => {
  const bad = [
    'some',
    null,
    42,
    { mode: 'restricted' },
    { mode: 'everything' },
    { mode: 'all', rightsholderIds: [r1] },
    { mode: 'restricted', rightsholderIds: ["'; DROP TABLE data_access_roles; --"] },
    { mode: 'restricted', rightsholderIds: Array.from({ length: 10_001 }, () => r1) },
  ];
  for (const role of bad) {
    isError(
      t,
      await setRole(role),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(role).slice(0, 50),
    );
  }
  isError(
    t,
    await admin.client.mutateUnchecked('user.setDataAccessRole', {
      organizationId: org,
      userId: member.userId,
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test(
  'a restricted admin grants no more than they see: not to themselves, not to others',
  async (t) => {
    const boss = await addMember(srv, org, 'admin');
    const peer = await addMember(srv, org, 'member');
    ok(t, await setRole({ mode: 'restricted', rightsholderIds: [r1] }, boss.userId, owner.client));
    ok(t, await setRole({ mode: 'restricted', rightsholderIds: [] }, peer.userId, owner.client));
    for (const [role, userId] of [
      ['all', boss.userId],
      [{ mode: 'all' }, boss.userId],
      [{ mode: 'restricted', rightsholderIds: [r1, r2] }, boss.userId],
      ['all', peer.userId],
      [{ mode: 'restricted', rightsholderIds: [r2] }, peer.userId],
    ] as const) {
      const res = await setRole(role, userId, boss.client);
      t.equal(res.ok, false, `${JSON.stringify(role)} refused`);
      t.same(
        [res.error?.data.code, res.error?.data.errorCode],
        typeof role === 'string' || role.mode === 'all'
          ? ['FORBIDDEN', 'ROLE_NOT_GRANTABLE']
          : ['NOT_FOUND', 'RIGHTSHOLDER_NOT_FOUND'],
      );
    }
    t.same(await rightsholderScope(srv.deps.pool, org, boss.userId), [r1], 'still restricted');
    t.same(await rightsholderScope(srv.deps.pool, org, peer.userId), []);
    // within their own set they manage data access as any admin
    t.same(
      ok(t, await setRole({ mode: 'restricted', rightsholderIds: [r1] }, peer.userId, boss.client))
        .dataAccessRole,
      { mode: 'restricted', rightsholderIds: [r1] },
    );
    t.same(
      ok(t, await setRole({ mode: 'restricted', rightsholderIds: [] }, boss.userId, boss.client))
        .dataAccessRole,
      { mode: 'restricted', rightsholderIds: [] },
    );
  },
);

t.test(
  'the last unrestricted owner stays unrestricted: nobody else could grant them all again',
  async (t) => {
    const solo = await newOrganization(srv, 'Solo');
    const own = await insertRightsholder(srv, solo.organizationId, 'Own');
    const restrict = (client: typeof solo.client, userId: string, ids = [own]) =>
      client.mutate('user.setDataAccessRole', {
        organizationId: solo.organizationId,
        userId,
        role: { mode: 'restricted', rightsholderIds: ids },
      });
    // a sole owner restricting themselves would lock everyone out of 'all' for good
    isError(t, await restrict(solo.client, solo.userId), 'CONFLICT', 'LAST_OWNER');
    isError(t, await restrict(solo.client, solo.userId, []), 'CONFLICT', 'LAST_OWNER');
    t.equal(
      await rightsholderScope(srv.deps.pool, solo.organizationId, solo.userId),
      null,
      'still sees everything',
    );
    t.equal(
      (await activities(srv, solo.organizationId, 'user.setDataAccessRole')).length,
      0,
      'no event',
    );
    ok(
      t,
      await solo.client.mutate('user.setDataAccessRole', {
        organizationId: solo.organizationId,
        userId: solo.userId,
        role: 'all',
      }),
      "'all' is no restriction",
    );

    // with a second unrestricted owner one of them may be restricted, never both
    const second = await addMember(srv, solo.organizationId, 'owner');
    ok(t, await restrict(solo.client, second.userId), 'an owner restricts the other owner');
    isError(t, await restrict(solo.client, solo.userId), 'CONFLICT', 'LAST_OWNER');
    // nor is the last unrestricted owner removed, demoted or disabled by a restricted one
    const call = (path: MutationPath, input: Record<string, unknown>) =>
      second.client.mutate(path, {
        organizationId: solo.organizationId,
        userId: solo.userId,
        ...input,
      });
    isError(t, await call('organization.updateRole', { role: 'admin' }), 'CONFLICT', 'LAST_OWNER');
    isError(
      t,
      await call('user.updateOrganizationUserStatus', { status: 'disabled' }),
      'CONFLICT',
      'LAST_OWNER',
    );
    isError(t, await call('organization.removeUser', {}), 'CONFLICT', 'LAST_OWNER');
    isError(
      t,
      await solo.client.mutate('organization.removeUser', {
        organizationId: solo.organizationId,
        userId: solo.userId,
      }),
      'CONFLICT',
      'LAST_OWNER',
      'nor leaves on their own',
    );
    t.same(
      (
        await srv.deps.pool.query(
          'SELECT role, status FROM memberships WHERE organization_id = $1 AND user_id = $2',
          [solo.organizationId, solo.userId],
        )
      ).rows,
      [{ role: 'owner', status: 'active' }],
    );
    // a disabled owner does not count: restricting the active one is still refused
    ok(
      t,
      await solo.client.mutate('user.setDataAccessRole', {
        organizationId: solo.organizationId,
        userId: second.userId,
        role: 'all',
      }),
    );
    ok(
      t,
      await solo.client.mutate('user.updateOrganizationUserStatus', {
        organizationId: solo.organizationId,
        userId: second.userId,
        status: 'disabled',
      }),
    );
    isError(t, await restrict(solo.client, solo.userId), 'CONFLICT', 'LAST_OWNER');
    ok(
      t,
      await solo.client.mutate('user.updateOrganizationUserStatus', {
        organizationId: solo.organizationId,
        userId: second.userId,
        status: 'active',
      }),
    );

    // two owners restricting each other at once: one wins, the other is refused
    for (let round = 0; round < 5; round++) {
      const [a, b] = await Promise.all([
        restrict(solo.client, second.userId),
        restrict(second.client, solo.userId),
      ]);
      t.equal([a, b].filter((r) => r.ok).length, 1, `round ${round}: exactly one succeeds`);
      const refused = a.ok ? b : a;
      t.ok(
        refused.error &&
          ['LAST_OWNER', 'ROLE_NOT_GRANTABLE'].includes(refused.error.data.errorCode),
        `round ${round}: the other is refused (${refused.error?.data.errorCode})`,
      );
      const scopes = await Promise.all(
        [solo.userId, second.userId].map((u) =>
          rightsholderScope(srv.deps.pool, solo.organizationId, u),
        ),
      );
      t.equal(
        scopes.filter((s) => s === null).length,
        1,
        `round ${round}: one owner still sees everything`,
      );
      const free = scopes[0] === null ? solo : second;
      for (const o of [solo, second])
        ok(
          t,
          await free.client.mutate('user.setDataAccessRole', {
            organizationId: solo.organizationId,
            userId: o.userId,
            role: 'all',
          }),
        );
    }
  },
);

t.test(
  'two owners restricting each other, the second queued behind the first: LAST_OWNER',
  async (t) => {
    const pair = await newOrganization(srv, 'Pair');
    const oid = pair.organizationId;
    const own = await insertRightsholder(srv, oid, 'Theirs Together');
    const other = await addMember(srv, oid, 'owner');
    const restrict = (client: typeof pair.client, userId: string) =>
      client.mutate('user.setDataAccessRole', {
        organizationId: oid,
        userId,
        role: { mode: 'restricted', rightsholderIds: [own] },
      });
    const [first, second] = await queuedBehindOrganization(srv.deps.pool, oid, [
      () => restrict(pair.client, other.userId),
      () => restrict(other.client, pair.userId),
    ]);
    ok(t, first!, 'the first restriction wins');
    isError(
      t,
      second!,
      'CONFLICT',
      'LAST_OWNER',
      'the now restricted owner cannot restrict the last unrestricted one',
    );
    t.same(
      await Promise.all(
        [pair.userId, other.userId].map((u) => rightsholderScope(srv.deps.pool, oid, u)),
      ),
      [null, [own]],
    );
  },
);
