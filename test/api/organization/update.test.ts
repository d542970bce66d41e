// organization.update: admin renames the organization, with field-level activity.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, SQL_INJECTION } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const admin = await addMember(srv, owner.organizationId, 'admin');
const writer = await addMember(srv, owner.organizationId, 'writer');
const org = owner.organizationId;

t.test('an admin renames; the change is in the activity log', async (t) => {
  const updated = ok(
    t,
    await admin.client.mutate('organization.update', { organizationId: org, name: ' Acme Music ' }),
  );
  t.match(updated, {
    id: org,
    name: 'Acme Music',
    mdFetchMultiplier: 1,
    mdFetchFocus: false,
    deletedAt: null,
  });
  t.equal(
    ok(t, await owner.client.query('organization.getById', { organizationId: org })).name,
    'Acme Music',
  );
  const events = await activities(srv, org, 'organization.update');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    subjectId: org,
    subjectLabel: 'Acme Music',
    actorUserId: admin.userId,
    changes: { name: { before: 'Acme', after: 'Acme Music' } },
  });
  t.ok(events[0]!.apiKeyId, 'the API key is recorded');

  ok(
    t,
    await admin.client.mutate('organization.update', { organizationId: org, name: 'Acme Music' }),
  );
  t.equal((await activities(srv, org, 'organization.update')).length, 1, 'no change, no event');
});

t.test('below admin: FORBIDDEN', async (t) => {
  isError(
    t,
    await writer.client.mutate('organization.update', { organizationId: org, name: 'Nope' }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );
});

t.test('validation, and hostile text stays text', async (t) => {
  for (const name of ['', '  ', 'x'.repeat(201), ['a'], { $ne: 1 }]) {
    isError(
      t,
      await admin.client.mutateUnchecked('organization.update', { organizationId: org, name }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(name),
    );
  }
  isError(
    t,
    await admin.client.mutateUnchecked('organization.update', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'name is required',
  );
  t.equal(
    ok(
      t,
      await admin.client.mutate('organization.update', {
        organizationId: org,
        name: SQL_INJECTION,
      }),
    ).name,
    SQL_INJECTION,
  );
});

t.test('a deleted organization is NOT_FOUND', async (t) => {
  ok(t, await owner.client.mutate('organization.delete', { organizationId: org }));
  isError(
    t,
    await admin.client.mutate('organization.update', { organizationId: org, name: 'Back' }),
    'NOT_FOUND',
    'ORGANIZATION_NOT_FOUND',
  );
});
