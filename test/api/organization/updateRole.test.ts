// organization.updateRole: admins change roles within their own rank; c2_* roles only from
// platform operators; the last active owner stays.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, MISSING_ID, SQL_INJECTION } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const setRole = (client: typeof owner.client, userId: string, role: unknown) =>
  client.mutateUnchecked('organization.updateRole', { organizationId: org, userId, role });

t.test('an admin promotes a member; the change is recorded and takes effect', async (t) => {
  const member = await addMember(srv, org, 'member');
  isError(
    t,
    await member.client.query('organization.listUsers', { organizationId: org }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
  const updated = ok(t, await setRole(admin.client, member.userId, 'admin'));
  t.match(updated, { userId: member.userId, email: member.email, role: 'admin', status: 'active' });
  ok(
    t,
    await member.client.query('organization.listUsers', { organizationId: org }),
    'the new role applies at once',
  );
  const events = await activities(srv, org, 'organization.updateRole');
  t.match(events.at(-1), {
    subjectType: 'user',
    subjectId: member.userId,
    subjectLabel: member.email,
    actorUserId: admin.userId,
    changes: { role: { before: 'member', after: 'admin' } },
  });
  ok(t, await setRole(admin.client, member.userId, 'reader'), 'an admin may demote another admin');
  ok(t, await setRole(admin.client, member.userId, 'reader'));
  t.equal(
    (await activities(srv, org, 'organization.updateRole')).length,
    events.length + 1,
    'no change, no event',
  );
});

t.test('nobody grants a role above their own or changes someone above them', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  isError(
    t,
    await setRole(admin.client, writer.userId, 'owner'),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  isError(
    t,
    await setRole(admin.client, owner.userId, 'member'),
    'FORBIDDEN',
    'MEMBER_OUTRANKS_CALLER',
  );
  isError(
    t,
    await setRole(admin.client, admin.userId, 'owner'),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
    'not even to oneself',
  );
  isError(
    t,
    await setRole(writer.client, writer.userId, 'admin'),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
  ok(t, await setRole(owner.client, writer.userId, 'owner'), 'an owner makes another owner');
  ok(t, await setRole(owner.client, writer.userId, 'writer'));
  const { rows } = await srv.deps.pool.query(
    'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2',
    [org, writer.userId],
  );
  t.equal(rows[0].role, 'writer');
});

t.test('platform roles are granted only by platform operators', async (t) => {
  const member = await addMember(srv, org, 'member');
  isError(
    t,
    await setRole(owner.client, member.userId, 'c2_customer_support'),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  isError(
    t,
    await setRole(owner.client, member.userId, 'c2_superadmin'),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
  );
  const support = await outsider(srv, org, 'c2_customer_support');
  ok(t, await setRole(support.client, member.userId, 'c2_customer_support'));
  isError(
    t,
    await setRole(support.client, member.userId, 'c2_superadmin'),
    'FORBIDDEN',
    'ROLE_NOT_GRANTABLE',
    'support is below superadmin',
  );
  const operator = await outsider(srv, org, 'c2_superadmin');
  t.equal(
    ok(t, await setRole(operator.client, member.userId, 'c2_superadmin')).role,
    'c2_superadmin',
  );
});

t.test('the last active owner cannot be demoted', async (t) => {
  const solo = await newOrganization(srv, 'Solo');
  const call = (userId: string, role: string) =>
    solo.client.mutateUnchecked('organization.updateRole', {
      organizationId: solo.organizationId,
      userId,
      role,
    });
  isError(t, await call(solo.userId, 'admin'), 'CONFLICT', 'LAST_OWNER');
  const disabledOwner = await addMember(srv, solo.organizationId, 'owner', { status: 'disabled' });
  isError(
    t,
    await call(solo.userId, 'admin'),
    'CONFLICT',
    'LAST_OWNER',
    'a disabled owner does not count',
  );
  ok(t, await call(disabledOwner.userId, 'admin'), 'a disabled owner may be demoted');
  const second = await addMember(srv, solo.organizationId, 'owner');
  ok(t, await call(solo.userId, 'admin'), 'with another active owner, demotion is fine');
  isError(
    t,
    await second.client.mutate('organization.updateRole', {
      organizationId: solo.organizationId,
      userId: second.userId,
      role: 'admin',
    }),
    'CONFLICT',
    'LAST_OWNER',
  );
});

t.test('concurrent demotions of the last two owners: exactly one wins', async (t) => {
  const duo = await newOrganization(srv, 'Duo');
  const b = await addMember(srv, duo.organizationId, 'owner');
  const [r1, r2] = await Promise.all([
    duo.client.mutate('organization.updateRole', {
      organizationId: duo.organizationId,
      userId: b.userId,
      role: 'admin',
    }),
    b.client.mutate('organization.updateRole', {
      organizationId: duo.organizationId,
      userId: duo.userId,
      role: 'admin',
    }),
  ]);
  t.equal([r1, r2].filter((r) => r.ok).length, 1);
  const failed = [r1, r2].find((r) => !r.ok)!;
  // the loser is refused either by the last-owner rule (both passed the role check, the lock
  // ordered them) or, when the winner's demotion of the loser committed first, because the loser
  // is no longer an owner and so may not change one
  t.ok(
    failed.ok === false &&
      ['LAST_OWNER', 'MEMBER_OUTRANKS_CALLER'].includes(failed.error.data.errorCode),
    `refused: ${JSON.stringify(!failed.ok && failed.error.data)}`,
  );
  const { rows } = await srv.deps.pool.query(
    `SELECT count(*)::int AS n FROM memberships WHERE organization_id = $1 AND role = 'owner'`,
    [duo.organizationId],
  );
  t.equal(rows[0].n, 1);
});

t.test('a user of another organization, or no user: NOT_FOUND, nothing leaked', async (t) => {
  const res = await setRole(owner.client, other.userId, 'member');
  const error = isError(t, res, 'NOT_FOUND', 'USER_NOT_FOUND');
  t.notMatch(JSON.stringify(error), new RegExp(other.email));
  isError(t, await setRole(owner.client, MISSING_ID, 'member'), 'NOT_FOUND', 'USER_NOT_FOUND');
  const { rows } = await srv.deps.pool.query('SELECT role FROM memberships WHERE user_id = $1', [
    other.userId,
  ]);
  t.same(rows, [{ role: 'owner' }]);
});

t.test('validation', async (t) => {
  for (const role of ['god', SQL_INJECTION, '', null, ['owner']]) {
    isError(
      t,
      await setRole(owner.client, admin.userId, role),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(role),
    );
  }
  isError(
    t,
    await setRole(owner.client, SQL_INJECTION, 'member'),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});
