// organization.listRightsholderMdPriorities: the ordering with names; search filters by name.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { insertRightsholder, SQL_INJECTION } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const admin = await addMember(srv, org, 'admin');
const other = await newOrganization(srv, 'Other');
const a = await insertRightsholder(srv, org, 'Alpha Band');
const b = await insertRightsholder(srv, org, '100% Beats');
const c = await insertRightsholder(srv, org, 'Charlie_Band');
const d = await insertRightsholder(srv, org, 'Delta');
const foreign = await insertRightsholder(srv, other.organizationId, 'Foreign Band');
await other.client.mutate('organization.setRightsholderMdPriorities', {
  organizationId: other.organizationId,
  rightsholderIds: [foreign],
});
const list = (search?: unknown, client = admin.client) =>
  client.queryUnchecked('organization.listRightsholderMdPriorities', {
    organizationId: org,
    ...(search === undefined ? {} : { search }),
  });

t.test('empty until set', async (t) => {
  t.same(ok(t, await list()), []);
});

t.test('the whole ordering, only this organization’s', async (t) => {
  ok(
    t,
    await admin.client.mutate('organization.setRightsholderMdPriorities', {
      organizationId: org,
      rightsholderIds: [c, a, b, d],
    }),
  );
  t.same(ok(t, await list()), [
    { position: 1, rightsholderId: c, name: 'Charlie_Band' },
    { position: 2, rightsholderId: a, name: 'Alpha Band' },
    { position: 3, rightsholderId: b, name: '100% Beats' },
    { position: 4, rightsholderId: d, name: 'Delta' },
  ]);
});

t.test('search: case-insensitive substring, positions kept, wildcards literal', async (t) => {
  t.same(ok(t, await list('band')), [
    { position: 1, rightsholderId: c, name: 'Charlie_Band' },
    { position: 2, rightsholderId: a, name: 'Alpha Band' },
  ]);
  t.same(ok(t, await list('%')), [{ position: 3, rightsholderId: b, name: '100% Beats' }]);
  t.same(ok(t, await list('_')), [{ position: 1, rightsholderId: c, name: 'Charlie_Band' }]);
  t.same(ok(t, await list('')), ok(t, await list()), 'an empty search is no search');
  t.same(ok(t, await list(SQL_INJECTION)), []);
  t.same(ok(t, await list('Foreign')), []);
  isError(t, await list('x'.repeat(201)), 'BAD_REQUEST', 'VALIDATION_FAILED');
  isError(t, await list(['band']), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test('a rightsholder removed or soft-deleted later drops out without a gap', async (t) => {
  await srv.deps.pool.query('DELETE FROM rightsholders WHERE id = $1', [c]);
  await srv.deps.pool.query('UPDATE rightsholders SET deleted_at = now() WHERE id = $1', [b]);
  t.same(ok(t, await list()), [
    { position: 1, rightsholderId: a, name: 'Alpha Band' },
    { position: 2, rightsholderId: d, name: 'Delta' },
  ]);
});

t.test('below admin: FORBIDDEN', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  isError(t, await list(undefined, writer.client), 'FORBIDDEN', 'INSUFFICIENT_ROLE');
});
