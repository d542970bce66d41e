// mapping.updateById: every change a new revision; verify checks the statements it would apply
// to; redriveFileIds queues those statements for reprocessing once the change is committed.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import {
  createDistributor,
  createMapping,
  FIELDS,
  HASH,
  HEADERS,
  insertStatement,
  libraryMapping,
  mappingEvents,
  UNKNOWN_ID,
} from './helpers.ts';
import { details, isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

const update = (input: Record<string, unknown>) =>
  owner.client.mutateUnchecked('mapping.updateById', { organizationId: org, ...input });

async function queued(statementId: string): Promise<unknown[]> {
  const { rows } = await srv.deps.pool.query(
    `SELECT j.task_identifier, p.payload FROM graphile_worker.jobs j JOIN graphile_worker._private_jobs p USING (id) WHERE j.key = $1`,
    [`statement_ingest:${statementId}`],
  );
  return rows;
}

t.test(
  'every change is a new revision with the exact content; no change writes nothing',
  async (t) => {
    const created = await createMapping(t, owner);
    const distributor = await createDistributor(t, owner, 'Rev Distributor');
    const fields2 = { ...FIELDS, currency: { constant: 'GBP' }, rawArtist: { column: 'Store' } };
    const r2 = ok(
      t,
      await update({
        id: created.id,
        fields: fields2,
        name: 'Renamed',
        distributorId: [distributor.id],
      }),
    );
    t.match(r2, {
      id: created.id,
      revision: 2,
      name: 'Renamed',
      fields: fields2,
      distributorId: distributor.id,
      changed: true,
      redriven: [],
      verification: null,
    });
    const same = ok(t, await update({ id: created.id, fields: fields2, name: 'Renamed' }));
    t.match(same, { revision: 2, changed: false });
    const r3 = ok(
      t,
      await update({ id: created.id, distributorId: null, fileCategories: ['digital'] }),
    );
    t.match(r3, { revision: 3, distributorId: null, fileCategories: ['digital'] });

    const revisions = ok(
      t,
      await owner.client.query('mapping.revision.listByMapping', {
        organizationId: org,
        mappingId: created.id,
      }),
    );
    t.same(
      revisions.data.map((r: any) => [
        r.revision,
        r.name,
        r.fields.currency,
        r.distributorId,
        r.changedFields,
      ]),
      [
        [1, 'Our layout', { constant: 'EUR' }, null, null],
        [2, 'Renamed', { constant: 'GBP' }, distributor.id, ['name', 'fields', 'distributorId']],
        [3, 'Renamed', { constant: 'GBP' }, null, ['distributorId', 'fileCategories']],
      ],
    );
    const events = await mappingEvents(srv, org, created.id);
    t.same(
      events.map((e) => e[0]),
      ['mapping.updateById', 'mapping.updateById', 'mapping.create'],
    );
    t.same(Object.keys(events[1]![1] as object).sort(), ['distributorId', 'fields', 'name']);
    t.same((events[1]![1] as any).name, { before: 'Our layout', after: 'Renamed' });
  },
);

t.test('changing headers changes the header hash, and fields must still fit them', async (t) => {
  const other = await newOrganization(srv, 'Headers');
  const m = await createMapping(t, other);
  const headers = [...HEADERS, 'Artist'];
  const res = ok(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: other.organizationId,
      id: m.id,
      headers,
      fields: { ...FIELDS, rawArtist: { column: 'Artist' } },
    }),
  );
  t.match(res, { headers, headerHash: computeHeaderHash(headers), revision: 2 });
  const bad = await other.client.mutate('mapping.updateById', {
    organizationId: other.organizationId,
    id: m.id,
    headers: ['Period', 'Net (EUR)'],
  });
  isError(t, bad, 'BAD_REQUEST', 'MAPPING_COLUMN_UNKNOWN');
  t.same(
    details(bad).fields.map((f: any) => f.path),
    [
      'fields.source.column',
      'fields.units.column',
      'fields.country.column',
      'fields.rawTitle.column',
      'fields.rawArtist.column',
      'fields.isrc.column',
    ],
  );
  isError(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: other.organizationId,
      id: m.id,
      fields: { currency: { constant: 'EUR' } },
    }),
    'BAD_REQUEST',
    'MAPPING_REQUIRED_FIELDS_MISSING',
  );
  // another mapping of the organization already has those headers
  const second = await createMapping(t, other, {
    headers: ['Only', 'Two'],
    fields: {
      stmtYear: { column: 'Only' },
      stmtPeriod: { column: 'Only' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'Two' },
    },
  });
  const taken = await other.client.mutate('mapping.updateById', {
    organizationId: other.organizationId,
    id: second.id,
    headers,
    fields: { ...FIELDS, rawArtist: { column: 'Artist' } },
  });
  isError(t, taken, 'CONFLICT', 'MAPPING_HEADER_HASH_TAKEN');
  t.same(details(taken), { mappingId: m.id });
  t.equal(
    ok(
      t,
      await other.client.query('mapping.getMapping', {
        organizationId: other.organizationId,
        id: second.id,
      }),
    ).revision,
    1,
    'nothing changed',
  );
});

t.test('library mappings are read-only; foreign and unknown ids are NOT_FOUND', async (t) => {
  const believe = await libraryMapping(t, owner, 'believe');
  const res = await update({ id: believe.id, name: 'Mine now' });
  isError(t, res, 'FORBIDDEN', 'LIBRARY_MAPPING_READ_ONLY');
  t.same(details(res), { libraryKey: 'believe', headerHash: believe.headerHash });
  const other = await newOrganization(srv, 'Foreign');
  const theirs = await createMapping(t, other);
  isError(t, await update({ id: theirs.id, name: 'x' }), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  isError(t, await update({ id: UNKNOWN_ID, name: 'x' }), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  t.equal(
    ok(
      t,
      await other.client.query('mapping.getMapping', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Our layout',
  );
  const foreignDistributor = await createDistributor(t, other, 'Not yours');
  const mine = await createMapping(t, owner, {
    headers: ['D1', 'D2'],
    fields: {
      stmtYear: { column: 'D1' },
      stmtPeriod: { column: 'D1' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'D2' },
    },
  });
  isError(
    t,
    await update({ id: mine.id, distributorId: foreignDistributor.id }),
    'NOT_FOUND',
    'DISTRIBUTOR_NOT_FOUND',
  );
  isError(
    t,
    await update({ id: mine.id, distributorId: [UNKNOWN_ID, UNKNOWN_ID] }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'one distributor at most',
  );
});

t.test('redriveFileIds: queued after the change, with their own checks', async (t) => {
  const other = await newOrganization(srv, 'Redrive');
  const o = other.organizationId;
  const m = await createMapping(t, other);
  const waiting = await insertStatement(srv, o, { status: 'needs_mapping' });
  const processed = await insertStatement(srv, o, {
    status: 'processed',
    mappingId: m.id,
    mappingRevision: 1,
  });
  const fields2 = { ...FIELDS, currency: { constant: 'CHF' } };
  const res = ok(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      fields: fields2,
      redriveFileIds: [waiting, processed, waiting],
    }),
  );
  t.match(res, { revision: 2, changed: true });
  t.same([...res.redriven].sort(), [waiting, processed].sort());
  for (const id of [waiting, processed]) {
    t.same(
      await queued(id),
      [
        {
          task_identifier: 'statement_ingest',
          payload: { organizationId: o, statementId: id, reason: 'redrive' },
        },
      ],
      `${id} queued once`,
    );
  }
  t.same((await mappingEvents(srv, o, m.id))[0], [
    'mapping.redrive',
    { statementIds: { before: null, after: res.redriven } },
  ]);

  // a statement of another layout would not use this mapping: refused, and nothing changes or is queued
  const otherLayout = await insertStatement(srv, o, {
    headers: ['Some', 'Other', 'Layout'],
    status: 'failed',
  });
  const mismatch = await other.client.mutate('mapping.updateById', {
    organizationId: o,
    id: m.id,
    name: 'Should not stick',
    redriveFileIds: [otherLayout],
  });
  isError(t, mismatch, 'BAD_REQUEST', 'MAPPING_REDRIVE_HEADER_MISMATCH');
  t.same(details(mismatch), { statementIds: [otherLayout] });
  t.same(await queued(otherLayout), []);
  t.equal(
    ok(t, await other.client.query('mapping.getMapping', { organizationId: o, id: m.id })).name,
    'Our layout',
  );

  // the same columns in another order: the pipeline matches the mapping by its columns, so it is redriven
  const reordered = await insertStatement(srv, o, {
    headers: [...HEADERS].reverse(),
    status: 'failed',
  });
  const res2 = ok(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      redriveFileIds: [reordered],
    }),
  );
  t.same(res2.redriven, [reordered]);
  t.same(await queued(reordered), [
    {
      task_identifier: 'statement_ingest',
      payload: { organizationId: o, statementId: reordered, reason: 'redrive' },
    },
  ]);

  // unknown, foreign, deleted and unprocessable statements
  const foreign = await insertStatement(srv, owner.organizationId, {});
  const deleted = await insertStatement(srv, o, { deleted: true });
  for (const [label, id] of [
    ['unknown', UNKNOWN_ID],
    ['foreign', foreign],
    ['deleted', deleted],
  ] as const) {
    isError(
      t,
      await other.client.mutate('mapping.updateById', {
        organizationId: o,
        id: m.id,
        redriveFileIds: [id],
      }),
      'NOT_FOUND',
      'STATEMENT_NOT_FOUND',
      label,
    );
  }
  const uploading = await insertStatement(srv, o, { status: 'uploading', headers: null });
  isError(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      redriveFileIds: [uploading],
    }),
    'CONFLICT',
    'STATEMENT_STATE_CONFLICT',
  );
  isError(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      redriveFileIds: ['not-a-uuid'],
    }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  // a redrive without a change still queues, at the current revision
  const again = ok(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      redriveFileIds: [processed],
    }),
  );
  t.match(again, { revision: 2, changed: false, redriven: [processed] });
});

t.test('verify: the statements it would apply to must fit, else nothing changes', async (t) => {
  const other = await newOrganization(srv, 'Verify');
  const o = other.organizationId;
  const m = await createMapping(t, other);
  const fits = await insertStatement(srv, o, {
    status: 'processed',
    mappingId: m.id,
    mappingRevision: 1,
  });
  await insertStatement(srv, o, { status: 'needs_mapping' });
  const good = ok(
    t,
    await other.client.mutate('mapping.updateById', {
      organizationId: o,
      id: m.id,
      name: 'Verified',
      verify: true,
    }),
  );
  t.same(good.verification, { statements: 2, problems: [] });
  t.equal(good.revision, 2);

  // new headers: the statement processed with it would be detached
  const headers = [...HEADERS, 'Label'];
  const detached = await other.client.mutate('mapping.updateById', {
    organizationId: o,
    id: m.id,
    headers,
    verify: true,
  });
  isError(t, detached, 'BAD_REQUEST', 'MAPPING_VERIFY_FAILED');
  t.same(details(detached), {
    statements: 0,
    problems: [{ statementId: fits, fileName: 'seed.csv', problem: 'detached' }],
  });
  t.equal(
    ok(t, await other.client.query('mapping.getMapping', { organizationId: o, id: m.id }))
      .headerHash,
    HASH,
    'nothing changed',
  );
  // without verify the same change is made
  t.equal(
    ok(t, await other.client.mutate('mapping.updateById', { organizationId: o, id: m.id, headers }))
      .headerHash,
    computeHeaderHash(headers),
  );

  // a statement whose stored headers lack a column the mapping reads
  const o2 = (await newOrganization(srv, 'Verify columns')).organizationId;
  const admin2 = await addMember(srv, o2, 'admin');
  const m2 = ok(
    t,
    await admin2.client.mutate('mapping.create', {
      organizationId: o2,
      headers: HEADERS,
      headerHash: HASH,
      fields: FIELDS,
    }),
  );
  const stale = await insertStatement(srv, o2, { status: 'failed' });
  await srv.deps.pool.query(`UPDATE statements SET headers = $2 WHERE id = $1`, [
    stale,
    ['Period', 'Net (EUR)'],
  ]);
  const missing = await admin2.client.mutate('mapping.updateById', {
    organizationId: o2,
    id: m2.id,
    verify: true,
    redriveFileIds: [stale],
  });
  isError(t, missing, 'BAD_REQUEST', 'MAPPING_VERIFY_FAILED');
  t.same(details(missing).problems, [
    {
      statementId: stale,
      fileName: 'seed.csv',
      problem: 'missing_columns',
      columns: ['Store', 'Qty', 'Country', 'Track', 'ISRC'],
    },
  ]);
  t.same(await queued(stale), [], 'a refused update queues nothing');
});

t.test('input checks', async (t) => {
  const m = await createMapping(t, owner, {
    headers: ['R1', 'R2'],
    fields: {
      stmtYear: { column: 'R1' },
      stmtPeriod: { column: 'R1' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'R2' },
    },
  });
  const cases: [string, Record<string, unknown>][] = [
    ['no id', { name: 'x' }],
    ['bad name', { id: m.id, name: 'x'.repeat(201) }],
    ['bad verify', { id: m.id, verify: 'yes' }],
    [
      'too many redrives',
      { id: m.id, redriveFileIds: Array.from({ length: 1_001 }, () => UNKNOWN_ID) },
    ],
    ['fields not an object', { id: m.id, fields: [] }],
    [
      'deep fileCategories',
      { id: m.id, fileCategories: JSON.parse('{"a":'.repeat(30) + '1' + '}'.repeat(30)) },
    ],
  ];
  for (const [label, input] of cases)
    isError(t, await update(input), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
});
