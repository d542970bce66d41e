// distributor.updateById: rename one of the organization's own distributors.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import {
  createDistributor,
  createMapping,
  libraryMapping,
  UNKNOWN_ID,
} from '../mapping/helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const update = (input: Record<string, unknown>) =>
  owner.client.mutateUnchecked('distributor.updateById', { organizationId: org, ...input });

t.test('renames, records the change, and mappings show the new name', async (t) => {
  const d = await createDistributor(t, owner, 'Old Name');
  const m = await createMapping(t, owner, { distributorId: d.id });
  const res = ok(t, await update({ id: d.id, name: ' New Name ' }));
  t.match(res, { id: d.id, name: 'New Name', source: 'organization' });
  t.ok(res.updatedAt > d.updatedAt);
  t.equal(
    ok(t, await owner.client.query('mapping.getMapping', { organizationId: org, id: m.id }))
      .distributorName,
    'New Name',
  );
  const { rows } = await srv.deps.pool.query(
    `SELECT action, subject_type, changes FROM activity_events WHERE organization_id = $1 AND action = 'distributor.updateById'`,
    [org],
  );
  t.same(rows, [
    {
      action: 'distributor.updateById',
      subject_type: 'organization',
      changes: { distributorName: { before: 'Old Name', after: 'New Name' } },
    },
  ]);
  // nothing to change: the same record, no event
  t.same(ok(t, await update({ id: d.id, name: 'New Name' })).updatedAt, res.updatedAt);
  t.same(ok(t, await update({ id: d.id })).name, 'New Name');
});

t.test('names stay unique', async (t) => {
  await createDistributor(t, owner, 'Taken');
  const d = await createDistributor(t, owner, 'Free');
  isError(t, await update({ id: d.id, name: 'TAKEN' }), 'CONFLICT', 'DISTRIBUTOR_NAME_TAKEN');
  ok(t, await update({ id: d.id, name: 'FREE' }), 'its own name in another case is fine');
});

t.test('library distributors are read-only; foreign and unknown ids are NOT_FOUND', async (t) => {
  const lib = await libraryMapping(t, owner, 'apple');
  isError(
    t,
    await update({ id: lib.distributorId, name: 'Mine' }),
    'FORBIDDEN',
    'LIBRARY_DISTRIBUTOR_READ_ONLY',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createDistributor(t, other, 'Theirs');
  isError(t, await update({ id: theirs.id, name: 'Mine' }), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  t.equal(
    ok(
      t,
      await other.client.query('distributor.getById', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Theirs',
  );
  isError(t, await update({ id: UNKNOWN_ID, name: 'x' }), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await update({ id: theirs.id, name: '' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await update({ id: 'nope', name: 'x' }), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
