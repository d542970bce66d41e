// distributor.create: a statement format owner of the organization, unique by name.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const create = (name: unknown) =>
  owner.client.mutateUnchecked('distributor.create', { organizationId: org, name });

t.test('creates with the exact record, recorded on the organization', async (t) => {
  const d = ok(t, await create('  Indie Dist  '));
  t.match(d, { organizationId: org, source: 'organization', name: 'Indie Dist', mappings: [] });
  t.match(d.id, /^[0-9a-f-]{36}$/);
  t.equal(d.createdAt, d.updatedAt);
  const { rows } = await srv.deps.pool.query(
    `SELECT action, subject_type, subject_id, subject_label, changes FROM activity_events WHERE organization_id = $1 AND action LIKE 'distributor.%'`,
    [org],
  );
  t.same(rows, [
    {
      action: 'distributor.create',
      subject_type: 'organization',
      subject_id: org,
      subject_label: 'Indie Dist',
      changes: { distributor: { before: null, after: { id: d.id, name: 'Indie Dist' } } },
    },
  ]);
});

t.test('names are unique in the organization, ignoring case and surrounding space', async (t) => {
  ok(t, await create('Unique Name'));
  isError(t, await create(' unique name '), 'CONFLICT', 'DISTRIBUTOR_NAME_TAKEN');
  const other = await newOrganization(srv, 'Other');
  ok(
    t,
    await other.client.mutate('distributor.create', {
      organizationId: other.organizationId,
      name: 'Unique Name',
    }),
    'another organization may use it',
  );
  // a library distributor's name is no conflict: the organization may keep its own variant
  ok(t, await create('DistroKid'));
});

t.test('invalid names are BAD_REQUEST', async (t) => {
  for (const [label, name] of [
    ['missing', undefined],
    ['empty', ''],
    ['blank', '   '],
    ['too long', 'x'.repeat(201)],
    ['not a string', 42],
    ['NUL', 'a\u0000b'],
  ] as const) {
    isError(t, await create(name), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
  }
});

t.test('roles: admin and above', async (t) => {
  const admin = await addMember(srv, org, 'admin');
  ok(t, await admin.client.mutate('distributor.create', { organizationId: org, name: 'By admin' }));
});
