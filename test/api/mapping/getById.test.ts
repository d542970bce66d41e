// mapping.getById: the deprecated alias of mapping.getMapping by id.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestServer } from '../../helpers/server.ts';
import { createMapping, libraryMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('answers exactly what getMapping answers, own and library mappings', async (t) => {
  const mine = await createMapping(t, owner);
  t.same(
    ok(t, await owner.client.query('mapping.getById', { organizationId: org, id: mine.id })),
    ok(t, await owner.client.query('mapping.getMapping', { organizationId: org, id: mine.id })),
  );
  const bmi = await libraryMapping(t, owner, 'bmi');
  t.same(
    ok(t, await owner.client.query('mapping.getById', { organizationId: org, id: bmi.id })),
    bmi,
  );
});

t.test('unknown, foreign and malformed ids', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other);
  isError(
    t,
    await owner.client.query('mapping.getById', { organizationId: org, id: theirs.id }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('mapping.getById', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.query('mapping.getById', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(
    t,
    await owner.client.query('mapping.getById', { organizationId: org, id: 'x'.repeat(10_000) }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('marked deprecated in schemas.json, pointing to getMapping', async (t) => {
  const schemas = (await (await fetch(`${srv.url}/docs/schemas.json`)).json()) as Record<
    string,
    any
  >;
  t.match(schemas['mapping.getById'], {
    method: 'GET',
    scope: 'admin',
    minRole: 'admin',
    deprecated: 'Use mapping.getMapping.',
  });
  t.notOk('deprecated' in schemas['mapping.getMapping']);
  t.match(schemas['mapping.revision.listByMapping'], {
    method: 'GET',
    path: '/trpc/mapping.revision.listByMapping',
  });
});
