// user.setRightsholderSort: any member sets their own rightsholder ordering.
import t from 'tap';
import { getRightsholderSort } from '../../../src/organizations/preferences.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, SQL_INJECTION } from '../organization/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const member = await addMember(srv, org, 'member');
const setSort = (sort: unknown, client = member.client) =>
  client.mutateUnchecked('user.setRightsholderSort', { organizationId: org, sort });

t.test('each ordering is stored per member and organization', async (t) => {
  for (const sort of ['last_updated', 'recently_created', 'alphabetical'] as const) {
    t.same(ok(t, await setSort(sort)), { rightsholderSort: sort });
    t.equal(await getRightsholderSort(srv.deps.pool, org, member.userId), sort);
    t.equal(
      ok(t, await member.client.query('user.preferences', { organizationId: org }))
        .rightsholderSort,
      sort,
    );
  }
  ok(t, await setSort('last_updated'));
  t.equal(
    await getRightsholderSort(srv.deps.pool, org, owner.userId),
    'alphabetical',
    'other members are unaffected',
  );
});

t.test('changes are recorded, field by field; repeating a value records nothing', async (t) => {
  const before = (await activities(srv, org, 'user.setRightsholderSort')).length;
  ok(t, await setSort('last_updated'));
  t.equal((await activities(srv, org, 'user.setRightsholderSort')).length, before);
  ok(t, await setSort('recently_created'));
  const events = await activities(srv, org, 'user.setRightsholderSort');
  t.match(events.at(-1), {
    subjectType: 'user',
    subjectId: member.userId,
    subjectLabel: member.email,
    actorUserId: member.userId,
    changes: { rightsholderSort: { before: 'last_updated', after: 'recently_created' } },
  });
});

t.test('validation', async (t) => {
  for (const sort of ['newest', '', SQL_INJECTION, null, 1, ['alphabetical']]) {
    isError(t, await setSort(sort), 'BAD_REQUEST', 'VALIDATION_FAILED', JSON.stringify(sort));
  }
  isError(
    t,
    await member.client.mutateUnchecked('user.setRightsholderSort', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('a disabled member cannot', async (t) => {
  const disabled = await addMember(srv, org, 'writer', { status: 'disabled' });
  isError(t, await setSort('alphabetical', disabled.client), 'FORBIDDEN', 'MEMBER_DISABLED');
});
