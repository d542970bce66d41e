// payor.listGlobal: autocomplete over the shipped payors and those seen in any statement, never
// telling which organization; members of any role may use it.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { data, expectError } from '../../lookups/helpers.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Payor Org');
const db = srv.deps.pool;

t.test('the shipped payors, 20 at a time by default', async (t) => {
  const page = data(await owner.client.query('payor.listGlobal', { organizationId: owner.organizationId }));
  t.equal(page.pagination.total, 48);
  t.equal(page.pagination.limit, 20);
  t.same(page.data.slice(0, 3), [
    { name: 'Amazon Music', category: 'store' },
    { name: 'Amuse', category: 'distributor' },
    { name: 'Apple Music', category: 'store' },
  ]);
  const desc = data(await owner.client.query('payor.listGlobal', { organizationId: owner.organizationId, pagination: { page: 1, limit: 3, sortBy: 'name', sortOrder: 'desc' } }));
  const all = data(await owner.client.query('payor.listGlobal', { organizationId: owner.organizationId, pagination: { page: 1, limit: 100 } }));
  t.same(desc.data, all.data.slice(-3).reverse(), 'sortOrder desc: Z to A');
});

t.test('search: names starting with it first, then containing it; seen payors join without their organization', async (t) => {
  await db.query(`INSERT INTO payors_seen (name_normalized, name, first_seen_at) VALUES ('indie pay collective', 'Indie Pay Collective', now()), ('indie soul records', 'Indie Soul Records', now()), ('distrokid', 'DISTROKID', now())`);
  const reader = await addMember(srv, owner.organizationId, 'reader');
  const res = data(await reader.client.query('payor.listGlobal', { organizationId: owner.organizationId, search: 'so' }));
  t.same(
    res.data.map((p: any) => p.name),
    ['SOCAN', 'Songtrust', 'Sony Music Entertainment', 'Sony Music Publishing', 'SoundExchange', 'Indie Soul Records'],
    'names starting with the search first, then those containing it',
  );
  const seen = data(await reader.client.query('payor.listGlobal', { organizationId: owner.organizationId, search: 'indie pay' }));
  t.same(seen.data, [{ name: 'Indie Pay Collective', category: null }]);
  t.notMatch(JSON.stringify(seen), /organization/i);
  const dk = data(await reader.client.query('payor.listGlobal', { organizationId: owner.organizationId, search: 'distrokid' }));
  t.same(dk.data, [{ name: 'DistroKid', category: 'distributor' }], 'a seen payor that is also shipped is listed once');
  const paged = data(await reader.client.query('payor.listGlobal', { organizationId: owner.organizationId, search: 'music', pagination: { page: 2, limit: 3 } }));
  t.equal(paged.pagination.page, 2);
  t.equal(paged.data.length, 3);
});

t.test('organization scoping', async (t) => {
  const stranger = await outsider(srv, owner.organizationId);
  expectError(t, await stranger.client.query('payor.listGlobal', { organizationId: owner.organizationId }), 'FORBIDDEN', 'NOT_ORGANIZATION_MEMBER');
  expectError(t, await owner.client.query('payor.listGlobal', {}), 'BAD_REQUEST', 'VALIDATION_FAILED');
});
