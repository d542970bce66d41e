// distributor.deleteById: refused while mappings or statements still use the distributor.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import {
  createDistributor,
  createMapping,
  insertStatement,
  libraryMapping,
  UNKNOWN_ID,
} from '../mapping/helpers.ts';
import { details, isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const remove = (id: unknown, caller = owner) =>
  caller.client.mutateUnchecked('distributor.deleteById', { organizationId: org, id });

t.test('an unused distributor is deleted and the deletion recorded', async (t) => {
  const d = await createDistributor(t, owner, 'Unused');
  t.same(ok(t, await remove(d.id)), { id: d.id, deleted: true });
  isError(
    t,
    await owner.client.query('distributor.getById', { organizationId: org, id: d.id }),
    'NOT_FOUND',
    'DISTRIBUTOR_NOT_FOUND',
  );
  const { rows } = await srv.deps.pool.query(
    `SELECT subject_type, subject_label FROM activity_events WHERE organization_id = $1 AND action = 'distributor.deleteById'`,
    [org],
  );
  t.same(rows, [{ subject_type: 'organization', subject_label: 'Unused' }]);
  isError(t, await remove(d.id), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND', 'twice');
});

t.test('in use by a mapping or a statement: CONFLICT with the counts', async (t) => {
  const d = await createDistributor(t, owner, 'Used');
  const m = await createMapping(t, owner, { distributorId: d.id });
  await insertStatement(srv, org, { distributorId: d.id });
  await insertStatement(srv, org, { distributorId: d.id, deleted: true });
  const res = await remove(d.id);
  isError(t, res, 'CONFLICT', 'DISTRIBUTOR_IN_USE');
  t.same(details(res), { mappings: 1, statements: 2 });
  ok(
    t,
    await owner.client.mutate('mapping.updateById', {
      organizationId: org,
      id: m.id,
      distributorId: null,
    }),
  );
  t.same(
    details(await remove(d.id)),
    { mappings: 0, statements: 2 },
    'statements, even deleted ones, still name it',
  );
  await srv.deps.pool.query(
    `UPDATE statements SET distributor_id = NULL WHERE distributor_id = $1`,
    [d.id],
  );
  ok(t, await remove(d.id));
});

t.test('library, foreign and unknown distributors', async (t) => {
  const lib = await libraryMapping(t, owner, 'tunecore');
  isError(t, await remove(lib.distributorId), 'FORBIDDEN', 'LIBRARY_DISTRIBUTOR_READ_ONLY');
  const other = await newOrganization(srv, 'Other');
  const theirs = await createDistributor(t, other, 'Theirs');
  isError(t, await remove(theirs.id), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
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
  isError(t, await remove(UNKNOWN_ID), 'NOT_FOUND', 'DISTRIBUTOR_NOT_FOUND');
  isError(t, await remove(['x']), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('roles: writer and above', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  const d = await createDistributor(t, owner, 'For writer');
  ok(t, await remove(d.id, writer));
});
