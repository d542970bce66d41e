// organization.create: any authenticated caller; the caller becomes the owner.
import t from 'tap';
import { createApiKey } from '../../../src/auth/apiKeys.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { activities, SQL_INJECTION } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const caller = await newOrganization(srv, 'Home');

t.test('creates the organization with the caller as its owner', async (t) => {
  const created = ok(
    t,
    await caller.client.mutateUnchecked('organization.create', {
      organizationId: caller.organizationId,
      name: '  Acme Records  ',
    }),
  );
  t.match(created, {
    name: 'Acme Records',
    mdFetchMultiplier: 1,
    mdFetchFocus: false,
    deletedAt: null,
    role: 'owner',
  });
  t.match(created.id, /^[0-9a-f-]{36}$/);
  t.notSame(created.id, caller.organizationId);

  const { rows } = await srv.deps.pool.query(
    'SELECT user_id AS "userId", role, status FROM memberships WHERE organization_id = $1',
    [created.id],
  );
  t.same(rows, [{ userId: caller.userId, role: 'owner', status: 'active' }]);

  const events = await activities(srv, created.id, 'organization.create');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'organization',
    subjectId: created.id,
    subjectLabel: 'Acme Records',
    actorUserId: caller.userId,
    changes: null,
  });

  // a key for the new organization sees the caller as its owner
  const { key } = await createApiKey(srv.deps.pool, {
    userId: caller.userId,
    name: 'new',
    organizationIds: [created.id],
    patterns: ['*'],
  });
  const client = srv.client({ 'x-api-key': key, 'x-organization-id': created.id });
  const got = ok(t, await client.query('organization.getById', { organizationId: created.id }));
  t.match(got, { id: created.id, name: 'Acme Records', role: 'owner' });
});

t.test("the calling API key's scope is not widened to the new organization", async (t) => {
  const created = ok(t, await caller.client.mutate('organization.create', { name: 'Second' }));
  const res = await caller.client
    .with({ 'x-organization-id': created.id })
    .query('organization.getById', { organizationId: created.id });
  isError(t, res, 'FORBIDDEN', 'API_KEY_SCOPE_DENIED');
});

t.test('names are validated; hostile text is stored as text', async (t) => {
  for (const name of ['', '   ', 'n'.repeat(201), 42, null]) {
    isError(
      t,
      await caller.client.mutateUnchecked('organization.create', { name }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      JSON.stringify(name),
    );
  }
  isError(
    t,
    await caller.client.mutateUnchecked('organization.create', {}),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'no name',
  );
  const created = ok(t, await caller.client.mutate('organization.create', { name: SQL_INJECTION }));
  t.equal(created.name, SQL_INJECTION);
  const { rows } = await srv.deps.pool.query('SELECT count(*)::int AS n FROM organizations');
  t.equal(rows[0].n, 4, 'the organizations table is intact');
});

t.test('authentication is required', async (t) => {
  isError(
    t,
    await srv.anonymous.mutate('organization.create', { name: 'X' }),
    'UNAUTHORIZED',
    'AUTH_REQUIRED',
  );
  isError(
    t,
    await srv.client({ 'x-api-key': 'rk_nope' }).mutate('organization.create', { name: 'X' }),
    'UNAUTHORIZED',
    'INVALID_API_KEY',
  );
});
