// Membership changes are checked against the caller's standing as it is once the organization is
// locked, not as it was when the request was authorized. A change that waited for the lock
// behind another (the caller demoted, removed, disabled or restricted meanwhile) is refused, so
// two owners demoting each other at once cannot both win, even with a third owner to keep the
// last-owner rule quiet.
import t from 'tap';
import { addMember, newOrganization, type Caller } from '../helpers/principals.ts';
import { queuedBehindOrganization } from '../helpers/locks.ts';
import { startTestServer } from '../helpers/server.ts';
import type { Outcome } from '../helpers/trpc.ts';
import { insertRightsholder } from '../api/organization/helpers.ts';
import { isError, ok } from '../helpers/outcome.ts';

const srv = await startTestServer(t);
const pool = srv.deps.pool;

/** queuedBehindOrganization for calls of the API. */
function queued(
  organizationId: string,
  calls: (() => Promise<Outcome<unknown>>)[],
): Promise<Outcome<unknown>[]> {
  return queuedBehindOrganization(pool, organizationId, calls);
}

async function roleOf(organizationId: string, user: Caller): Promise<string | undefined> {
  const { rows } = await pool.query<{ role: string }>(
    'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2',
    [organizationId, user.userId],
  );
  return rows[0]?.role;
}

t.test(
  'three owners, two demote each other at once: the second is refused, its caller no longer an owner',
  async (t) => {
    const a = await newOrganization(srv, 'Trio');
    const org = a.organizationId;
    const b = await addMember(srv, org, 'owner');
    await addMember(srv, org, 'owner');
    const [first, second] = await queued(org, [
      () =>
        a.client.mutate('organization.updateRole', {
          organizationId: org,
          userId: b.userId,
          role: 'member',
        }),
      () =>
        b.client.mutate('organization.updateRole', {
          organizationId: org,
          userId: a.userId,
          role: 'member',
        }),
    ]);
    t.equal(ok<any>(t, first!).role, 'member', 'the first demotion wins');
    isError(
      t,
      second!,
      'FORBIDDEN',
      'INSUFFICIENT_ROLE',
      'the demoted owner can no longer demote anybody',
    );
    t.same([await roleOf(org, a), await roleOf(org, b)], ['owner', 'member']);
  },
);

t.test('an admin removed while their promotion waited: refused, nothing changed', async (t) => {
  const owner = await newOrganization(srv, 'Removal');
  const org = owner.organizationId;
  const admin = await addMember(srv, org, 'admin');
  const writer = await addMember(srv, org, 'writer');
  const [removed, promoted] = await queued(org, [
    () =>
      owner.client.mutate('organization.removeUser', { organizationId: org, userId: admin.userId }),
    () =>
      admin.client.mutate('organization.updateRole', {
        organizationId: org,
        userId: writer.userId,
        role: 'admin',
      }),
  ]);
  ok(t, removed!);
  isError(t, promoted!, 'FORBIDDEN', 'NOT_ORGANIZATION_MEMBER');
  t.equal(await roleOf(org, writer), 'writer');
});

t.test('an admin disabled while their invitation waited: no invitation, no link', async (t) => {
  const owner = await newOrganization(srv, 'Disabled');
  const org = owner.organizationId;
  const admin = await addMember(srv, org, 'admin');
  const [disabled, invited] = await queued(org, [
    () =>
      owner.client.mutate('user.updateOrganizationUserStatus', {
        organizationId: org,
        userId: admin.userId,
        status: 'disabled',
      }),
    () =>
      admin.client.mutate('organization.addUser', {
        organizationId: org,
        email: 'late@example.test',
        role: 'admin',
      }),
  ]);
  ok(t, disabled!);
  isError(t, invited!, 'FORBIDDEN', 'MEMBER_DISABLED');
  const { rows } = await pool.query('SELECT 1 FROM invitations WHERE organization_id = $1', [org]);
  t.equal(rows.length, 0);
});

t.test('an admin demoted to writer while their removal of a member waited: refused', async (t) => {
  const owner = await newOrganization(srv, 'Demoted');
  const org = owner.organizationId;
  const admin = await addMember(srv, org, 'admin');
  const member = await addMember(srv, org, 'member');
  const [demoted, removal] = await queued(org, [
    () =>
      owner.client.mutate('organization.updateRole', {
        organizationId: org,
        userId: admin.userId,
        role: 'writer',
      }),
    () =>
      admin.client.mutate('organization.removeUser', {
        organizationId: org,
        userId: member.userId,
      }),
  ]);
  ok(t, demoted!);
  isError(t, removal!, 'FORBIDDEN', 'INSUFFICIENT_ROLE');
  t.equal(await roleOf(org, member), 'member');
});

t.test(
  "an admin restricted while granting 'all' waited: refused, the member stays restricted",
  async (t) => {
    const owner = await newOrganization(srv, 'Restricted');
    const org = owner.organizationId;
    const admin = await addMember(srv, org, 'admin');
    const member = await addMember(srv, org, 'member');
    const rh = await insertRightsholder(srv, org, 'Only One');
    const restricted = { mode: 'restricted', rightsholderIds: [rh] };
    ok(
      t,
      await owner.client.mutate('user.setDataAccessRole', {
        organizationId: org,
        userId: member.userId,
        role: restricted,
      }),
    );
    const [restrict, grant] = await queued(org, [
      () =>
        owner.client.mutate('user.setDataAccessRole', {
          organizationId: org,
          userId: admin.userId,
          role: restricted,
        }),
      () =>
        admin.client.mutate('user.setDataAccessRole', {
          organizationId: org,
          userId: member.userId,
          role: 'all',
        }),
    ]);
    ok(t, restrict!);
    isError(t, grant!, 'FORBIDDEN', 'ROLE_NOT_GRANTABLE');
    const prefs = ok<any>(
      t,
      await member.client.query('user.preferences', { organizationId: org }),
    );
    t.same(prefs.dataAccessRole, restricted);
  },
);

t.test(
  "an admin demoted while their change of another member's API key waited: refused, the key unchanged",
  async (t) => {
    const owner = await newOrganization(srv, 'Keys');
    const org = owner.organizationId;
    const admin = await addMember(srv, org, 'admin');
    const writer = await addMember(srv, org, 'writer');
    const {
      rows: [key],
    } = await pool.query<{ id: string }>('SELECT id FROM api_keys WHERE user_id = $1', [
      writer.userId,
    ]);
    const [demoted, renamed, deleted] = await queued(org, [
      () =>
        owner.client.mutate('organization.updateRole', {
          organizationId: org,
          userId: admin.userId,
          role: 'writer',
        }),
      () =>
        admin.client.mutate('apiKey.update', {
          organizationId: org,
          id: key!.id,
          rotate: false,
          name: 'taken over',
        }),
      () => admin.client.mutate('apiKey.delete', { organizationId: org, id: key!.id }),
    ]);
    ok(t, demoted!);
    isError(t, renamed!, 'FORBIDDEN', 'INSUFFICIENT_ROLE');
    isError(t, deleted!, 'FORBIDDEN', 'INSUFFICIENT_ROLE');
    const { rows } = await pool.query('SELECT name FROM api_keys WHERE id = $1', [key!.id]);
    t.same(rows, [{ name: 'test' }], 'the key is as it was');
    t.equal((await writer.client.query('user.currentUser')).ok, true, 'and still works');
  },
);
