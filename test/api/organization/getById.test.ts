// organization.getById: any member; deleted organizations answer NOT_FOUND.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Acme');
const other = await newOrganization(srv, 'Other');

t.test("returns the organization and the caller's role", async (t) => {
  const got = ok(
    t,
    await owner.client.query('organization.getById', { organizationId: owner.organizationId }),
  );
  t.same(Object.keys(got).sort(), [
    'createdAt',
    'deletedAt',
    'id',
    'mdFetchFocus',
    'mdFetchMultiplier',
    'name',
    'role',
    'updatedAt',
  ]);
  t.match(got, {
    id: owner.organizationId,
    name: 'Acme',
    mdFetchMultiplier: 1,
    mdFetchFocus: false,
    deletedAt: null,
    role: 'owner',
  });
  for (const role of ['member', 'reader', 'writer', 'admin'] as const) {
    const m = await addMember(srv, owner.organizationId, role);
    t.equal(
      ok(t, await m.client.query('organization.getById', { organizationId: owner.organizationId }))
        .role,
      role,
    );
  }
  const operator = await outsider(srv, owner.organizationId, 'c2_superadmin');
  t.equal(
    ok(
      t,
      await operator.client.query('organization.getById', { organizationId: owner.organizationId }),
    ).role,
    'c2_superadmin',
  );
});

t.test('another organization: FORBIDDEN, nothing leaked', async (t) => {
  const stranger = await outsider(srv, other.organizationId);
  const res = await stranger.client.query('organization.getById', {
    organizationId: other.organizationId,
  });
  const error = isError(t, res, 'FORBIDDEN', 'NOT_ORGANIZATION_MEMBER');
  t.notMatch(JSON.stringify(error), /Other/);
  isError(
    t,
    await owner.client.query('organization.getById', { organizationId: other.organizationId }),
    'BAD_REQUEST',
    'ORGANIZATION_MISMATCH',
  );
});

t.test('a disabled member is refused', async (t) => {
  const disabled = await addMember(srv, owner.organizationId, 'admin', { status: 'disabled' });
  isError(
    t,
    await disabled.client.query('organization.getById', { organizationId: owner.organizationId }),
    'FORBIDDEN',
    'MEMBER_DISABLED',
  );
});

t.test('malformed input', async (t) => {
  isError(
    t,
    await owner.client.query('organization.getById', { organizationId: "1' OR '1'='1" }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('a deleted organization is NOT_FOUND', async (t) => {
  const gone = await newOrganization(srv, 'Gone');
  ok(t, await gone.client.mutate('organization.delete', { organizationId: gone.organizationId }));
  isError(
    t,
    await gone.client.query('organization.getById', { organizationId: gone.organizationId }),
    'NOT_FOUND',
    'ORGANIZATION_NOT_FOUND',
  );
});
