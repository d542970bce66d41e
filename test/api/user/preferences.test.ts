// user.preferences: the caller's own preferences, per organization.
import t from 'tap';
import { getRightsholderSort } from '../../../src/organizations/preferences.ts';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { insertRightsholder } from '../organization/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const reader = await addMember(srv, org, 'reader');
const second = await newOrganization(srv, 'Second');
const prefs = (client = reader.client, organizationId = org) =>
  client.query('user.preferences', { organizationId });

t.test('defaults: alphabetical, every rightsholder', async (t) => {
  t.same(ok(t, await prefs()), {
    organizationId: org,
    userId: reader.userId,
    rightsholderSort: 'alphabetical',
    dataAccessRole: { mode: 'all' },
  });
  t.equal(await getRightsholderSort(srv.deps.pool, org, reader.userId), 'alphabetical');
});

t.test('reflects what was set, for this member in this organization only', async (t) => {
  const rh = await insertRightsholder(srv, org, 'Artist');
  ok(
    t,
    await reader.client.mutate('user.setRightsholderSort', {
      organizationId: org,
      sort: 'recently_created',
    }),
  );
  ok(
    t,
    await owner.client.mutate('user.setDataAccessRole', {
      organizationId: org,
      userId: reader.userId,
      role: { mode: 'restricted', rightsholderIds: [rh] },
    }),
  );
  t.same(ok(t, await prefs()), {
    organizationId: org,
    userId: reader.userId,
    rightsholderSort: 'recently_created',
    dataAccessRole: { mode: 'restricted', rightsholderIds: [rh] },
  });
  t.same(ok(t, await prefs(owner.client)), {
    organizationId: org,
    userId: owner.userId,
    rightsholderSort: 'alphabetical',
    dataAccessRole: { mode: 'all' },
  });

  // the same person in another organization keeps separate preferences
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
    [second.organizationId, reader.userId],
  );
  await srv.deps.pool.query(
    'UPDATE api_keys SET organization_ids = organization_ids || $2::uuid WHERE user_id = $1',
    [reader.userId, second.organizationId],
  );
  const there = reader.client.with({ 'x-organization-id': second.organizationId });
  t.same(ok(t, await prefs(there, second.organizationId)), {
    organizationId: second.organizationId,
    userId: reader.userId,
    rightsholderSort: 'alphabetical',
    dataAccessRole: { mode: 'all' },
  });
});

t.test('outsiders and anonymous callers', async (t) => {
  const stranger = await outsider(srv, org);
  isError(t, await prefs(stranger.client), 'FORBIDDEN', 'NOT_ORGANIZATION_MEMBER');
  isError(
    t,
    await srv.anonymous.query('user.preferences', { organizationId: org }),
    'UNAUTHORIZED',
    'AUTH_REQUIRED',
  );
  isError(t, await prefs(reader.client, 'nope'), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
