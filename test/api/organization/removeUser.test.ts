// organization.removeUser: admins remove members within their own rank; the last owner stays.
import t from 'tap';
import { rightsholderScope } from '../../../src/access/dataAccess.ts';
import { getRightsholderSort } from '../../../src/organizations/preferences.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, insertRightsholder, MISSING_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const remove = (client: typeof owner.client, userId: string, organizationId = org) =>
  client.mutate('organization.removeUser', { organizationId, userId });

t.test('an admin removes a writer: access ends at once, their settings go with them', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  const rh = await insertRightsholder(srv, org, 'Artist');
  ok(
    t,
    await writer.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'last_updated',
    }),
  );
  ok(
    t,
    await admin.client.mutate('user.setDataAccessRole', {
      organizationId: org,
      userId: writer.userId,
      role: { mode: 'restricted', rightsholderIds: [rh] },
    }),
  );

  t.same(ok(t, await remove(admin.client, writer.userId)), {
    userId: writer.userId,
    removed: true,
  });
  isError(
    t,
    await writer.client.query('organization.getById', { organizationId: org }),
    'FORBIDDEN',
    'NOT_ORGANIZATION_MEMBER',
  );
  t.equal(await getRightsholderSort(srv.deps.pool, org, writer.userId), 'alphabetical');
  t.equal(await rightsholderScope(srv.deps.pool, org, writer.userId), null);
  const events = await activities(srv, org, 'organization.removeUser');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'user',
    subjectId: writer.userId,
    subjectLabel: writer.email,
    actorUserId: admin.userId,
    changes: { role: { before: 'writer', after: null }, status: { before: 'active', after: null } },
  });
  isError(
    t,
    await remove(admin.client, writer.userId),
    'NOT_FOUND',
    'USER_NOT_FOUND',
    'removing twice',
  );
});

t.test('nobody removes someone above them', async (t) => {
  isError(t, await remove(admin.client, owner.userId), 'FORBIDDEN', 'MEMBER_OUTRANKS_CALLER');
  const writer = await addMember(srv, org, 'writer');
  isError(t, await remove(writer.client, admin.userId), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
});

t.test('the last active owner cannot be removed; with a second owner they may leave', async (t) => {
  isError(t, await remove(owner.client, owner.userId), 'CONFLICT', 'LAST_OWNER');
  const second = await addMember(srv, org, 'owner');
  t.same(ok(t, await remove(owner.client, owner.userId)), { userId: owner.userId, removed: true });
  isError(t, await remove(second.client, second.userId), 'CONFLICT', 'LAST_OWNER');
});

t.test('a user of another organization, or no user: NOT_FOUND, nothing changed', async (t) => {
  isError(t, await remove(admin.client, other.userId), 'NOT_FOUND', 'USER_NOT_FOUND');
  isError(t, await remove(admin.client, MISSING_ID), 'NOT_FOUND', 'USER_NOT_FOUND');
  ok(
    t,
    await other.client.query('organization.getById', { organizationId: other.organizationId }),
    'still a member there',
  );
  isError(t, await remove(admin.client, 'not-a-uuid'), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
