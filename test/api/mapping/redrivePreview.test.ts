// mapping.redrivePreview: which statements a redrive with the current revision would change, and how.
import t from 'tap';
import { standardFields } from '../../../src/ingest/mappingFields.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createMapping, FIELDS, insertStatement, libraryMapping, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
/** The fields a mapping gives, in the order of the standard fields (as the preview lists them). */
const given = (fields: object) => standardFields.filter((f) => f in fields);
const preview = async (mappingId: string) =>
  owner.client.query('mapping.redrivePreview', { organizationId: org, mappingId });

t.test(
  'needs_mapping, older revision and another mapping; current, deleted and other layouts are not',
  async (t) => {
    const lib = await libraryMapping(t, owner, 'revelator');
    const m = await createMapping(t, owner);
    const fields2 = {
      ...FIELDS,
      currency: { constant: 'SEK' },
      units: { column: 'Store' },
      rawArtist: { column: 'Track' },
    };
    ok(
      t,
      await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: m.id,
        fields: fields2,
      }),
    );

    const waiting = await insertStatement(srv, org, {
      status: 'needs_mapping',
      fileName: 'waiting.csv',
    });
    const older = await insertStatement(srv, org, {
      status: 'processed',
      mappingId: m.id,
      mappingRevision: 1,
      fileName: 'older.csv',
    });
    const failed = await insertStatement(srv, org, {
      status: 'failed',
      mappingId: lib.id,
      mappingRevision: 1,
      fileName: 'other.csv',
    });
    await insertStatement(srv, org, {
      status: 'processed',
      mappingId: m.id,
      mappingRevision: 2,
      fileName: 'current.csv',
    });
    await insertStatement(srv, org, { status: 'needs_mapping', deleted: true });
    await insertStatement(srv, org, { status: 'needs_mapping', headers: ['Another', 'Layout'] });
    await insertStatement(srv, org, { status: 'uploaded' });
    const other = await newOrganization(srv, 'Other');
    await insertStatement(srv, other.organizationId, { status: 'needs_mapping' });

    const res = ok(t, await preview(m.id));
    t.match(res, {
      mappingId: m.id,
      revision: 2,
      headerHash: m.headerHash,
      source: 'organization',
      shadowedBy: null,
      total: 3,
    });
    t.same(res.statements, [
      {
        id: waiting,
        fileName: 'waiting.csv',
        status: 'needs_mapping',
        mappingId: null,
        mappingRevision: null,
        reason: 'needs_mapping',
        changedFields: given(fields2),
      },
      {
        id: older,
        fileName: 'older.csv',
        status: 'processed',
        mappingId: m.id,
        mappingRevision: 1,
        reason: 'older_revision',
        changedFields: ['currency', 'units', 'rawArtist'],
      },
      {
        id: failed,
        fileName: 'other.csv',
        status: 'failed',
        mappingId: lib.id,
        mappingRevision: 1,
        reason: 'other_mapping',
        // every field differs from Revelator's, whose columns this layout does not even have
        changedFields: res.statements[2]!.changedFields,
      },
    ]);
    t.ok(res.statements[2]!.changedFields.includes('royaltyEarnings'));

    // after a redrive of the older one nothing changes for the processed current ones
    const after = ok(
      t,
      await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: m.id,
        redriveFileIds: [older],
      }),
    );
    t.same(after.redriven, [older]);
  },
);

t.test(
  'a library mapping: statements processed with it are current; shadowed by an own mapping it applies to none',
  async (t) => {
    const fresh = await newOrganization(srv, 'Library');
    const o = fresh.organizationId;
    const lib = await libraryMapping(t, fresh, 'bandcamp');
    const current = await insertStatement(srv, o, {
      headers: lib.headers,
      mappingId: lib.id,
      mappingRevision: lib.revision,
    });
    const waiting = await insertStatement(srv, o, {
      headers: lib.headers,
      status: 'needs_mapping',
    });
    const res = ok(
      t,
      await fresh.client.query('mapping.redrivePreview', { organizationId: o, mappingId: lib.id }),
    );
    t.match(res, {
      source: 'library',
      shadowedBy: null,
      total: 1,
      statements: [{ id: waiting, reason: 'needs_mapping' }],
    });
    t.notOk(res.statements.some((s: any) => s.id === current));

    const own = await createMapping(t, fresh, {
      headers: lib.headers,
      fields: { ...lib.fields, currency: { constant: 'EUR' } },
    });
    t.same(
      ok(
        t,
        await fresh.client.query('mapping.redrivePreview', {
          organizationId: o,
          mappingId: lib.id,
        }),
      ),
      {
        mappingId: lib.id,
        revision: lib.revision,
        headerHash: lib.headerHash,
        source: 'library',
        shadowedBy: own.id,
        total: 0,
        statements: [],
      },
    );
    const mine = ok(
      t,
      await fresh.client.query('mapping.redrivePreview', { organizationId: o, mappingId: own.id }),
    );
    t.same(
      mine.statements.map((s: any) => [s.id, s.reason, s.changedFields]),
      [
        [current, 'other_mapping', ['currency']],
        [waiting, 'needs_mapping', given(own.fields)],
      ],
    );
  },
);

t.test('unknown, foreign and malformed ids; roles', async (t) => {
  const other = await newOrganization(srv, 'Foreign');
  const theirs = await createMapping(t, other);
  isError(t, await preview(theirs.id), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  isError(t, await preview(UNKNOWN_ID), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  isError(
    t,
    await owner.client.queryUnchecked('mapping.redrivePreview', { organizationId: org }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  isError(t, await preview('1; DROP TABLE statements'), 'BAD_REQUEST', 'VALIDATION_FAILED');
});

t.test(
  'data access: a restricted admin sees and redrives only statements of their rightsholders',
  async (t) => {
    const o = await newOrganization(srv, 'Restricted');
    const m = await createMapping(t, o);
    const mine = await insertStatement(srv, o.organizationId, {
      status: 'needs_mapping',
      fileName: 'mine.csv',
    });
    const theirs = await insertStatement(srv, o.organizationId, {
      status: 'needs_mapping',
      fileName: 'theirs.csv',
    });
    const { rows } = await srv.deps.pool.query<{ rightsholder_id: string }>(
      'SELECT rightsholder_id FROM statements WHERE id = $1',
      [mine],
    );
    const admin = await addMember(srv, o.organizationId, 'admin');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [o.organizationId, admin.userId, [rows[0]!.rightsholder_id]],
    );
    const res = ok(
      t,
      await admin.client.query('mapping.redrivePreview', {
        organizationId: o.organizationId,
        mappingId: m.id,
      }),
    );
    t.equal(res.total, 1);
    t.same(
      res.statements.map((s: any) => [s.id, s.fileName]),
      [[mine, 'mine.csv']],
    );
    t.equal(
      ok(
        t,
        await o.client.query('mapping.redrivePreview', {
          organizationId: o.organizationId,
          mappingId: m.id,
        }),
      ).total,
      2,
      'the owner sees both',
    );
    const update = (redriveFileIds: string[]) =>
      admin.client.mutate('mapping.updateById', {
        organizationId: o.organizationId,
        id: m.id,
        redriveFileIds,
      });
    isError(t, await update([theirs]), 'NOT_FOUND', 'STATEMENT_NOT_FOUND');
    t.same(ok(t, await update([mine])).redriven, [mine]);
  },
);
