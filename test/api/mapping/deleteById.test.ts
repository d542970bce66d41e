// mapping.deleteById: the organization's own mappings only; statements fall back to the library.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import {
  createMapping,
  insertStatement,
  libraryMapping,
  mappingEvents,
  UNKNOWN_ID,
} from './helpers.ts';
import { details, isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test(
  'deletes the mapping and its revisions; statements keep their rows and revision',
  async (t) => {
    const m = await createMapping(t, owner);
    ok(
      t,
      await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: m.id,
        name: 'Second',
      }),
    );
    const statement = await insertStatement(srv, org, { mappingId: m.id, mappingRevision: 2 });
    const res = ok(
      t,
      await owner.client.mutate('mapping.deleteById', { organizationId: org, id: m.id }),
    );
    t.same(res, { id: m.id, deleted: true, statementsProcessed: 1 });
    isError(
      t,
      await owner.client.query('mapping.getMapping', { organizationId: org, id: m.id }),
      'NOT_FOUND',
      'MAPPING_NOT_FOUND',
    );
    isError(
      t,
      await owner.client.query('mapping.revision.listByMapping', {
        organizationId: org,
        mappingId: m.id,
      }),
      'NOT_FOUND',
      'MAPPING_NOT_FOUND',
    );
    const { rows } = await srv.deps.pool.query(
      `SELECT mapping_id, mapping_revision, status FROM statements WHERE id = $1`,
      [statement],
    );
    t.same(rows, [{ mapping_id: null, mapping_revision: 2, status: 'processed' }]);
    t.same(
      (await mappingEvents(srv, org, m.id)).map((e) => e[0]),
      ['mapping.deleteById', 'mapping.updateById', 'mapping.create'],
      'the history stays',
    );
    isError(
      t,
      await owner.client.mutate('mapping.deleteById', { organizationId: org, id: m.id }),
      'NOT_FOUND',
      'MAPPING_NOT_FOUND',
      'twice',
    );
  },
);

t.test('deleting an override brings the library mapping back', async (t) => {
  const lib = await libraryMapping(t, owner, 'soundcloud');
  const own = await createMapping(t, owner, { headers: lib.headers, fields: lib.fields });
  t.equal(
    ok(
      t,
      await owner.client.query('mapping.getMapping', {
        organizationId: org,
        headerHash: lib.headerHash,
      }),
    ).id,
    own.id,
  );
  ok(t, await owner.client.mutate('mapping.deleteById', { organizationId: org, id: own.id }));
  const back = ok(
    t,
    await owner.client.query('mapping.getMapping', {
      organizationId: org,
      headerHash: lib.headerHash,
    }),
  );
  t.match(back, { id: lib.id, active: true });
});

t.test('library, foreign and unknown mappings', async (t) => {
  const lib = await libraryMapping(t, owner, 'youtube-asset-raw');
  const res = await owner.client.mutate('mapping.deleteById', { organizationId: org, id: lib.id });
  isError(t, res, 'FORBIDDEN', 'LIBRARY_MAPPING_READ_ONLY');
  t.same(details(res), { libraryKey: 'youtube-asset-raw', headerHash: lib.headerHash });
  t.equal(
    ok(t, await owner.client.query('mapping.getMapping', { organizationId: org, id: lib.id })).id,
    lib.id,
    'still there',
  );
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other);
  isError(
    t,
    await owner.client.mutate('mapping.deleteById', { organizationId: org, id: theirs.id }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  t.equal(
    ok(
      t,
      await other.client.query('mapping.getMapping', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).id,
    theirs.id,
  );
  isError(
    t,
    await owner.client.mutate('mapping.deleteById', { organizationId: org, id: UNKNOWN_ID }),
    'NOT_FOUND',
    'MAPPING_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('mapping.deleteById', { organizationId: org, id: "' OR 1=1 --" }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
});

t.test('roles: admin or owner only', async (t) => {
  const m = await createMapping(t, owner);
  const admin = await addMember(srv, org, 'admin');
  ok(t, await admin.client.mutate('mapping.deleteById', { organizationId: org, id: m.id }));
});
