// mapping.batchUpdate: all updates in one transaction or none.
import t from 'tap';
import { computeHeaderHash } from '../../../workers/headerHash.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createMapping, libraryMapping, mappingEvents, UNKNOWN_ID } from './helpers.ts';
import { details, isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

function layout(prefix: string) {
  const headers = [`${prefix} Period`, `${prefix} Net`, `${prefix} Store`];
  return {
    name: prefix,
    headers,
    headerHash: computeHeaderHash(headers),
    fields: {
      stmtYear: { column: headers[0] },
      stmtPeriod: { column: headers[0] },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: headers[1] },
    },
  };
}
const get = async (id: string) =>
  (await owner.client.query('mapping.getMapping', { organizationId: org, id })) as any;
const batch = (updates: unknown) =>
  owner.client.mutateUnchecked('mapping.batchUpdate', { organizationId: org, updates });

t.test('applies every update, each a revision, and records each', async (t) => {
  const a = await createMapping(t, owner, layout('A'));
  const b = await createMapping(t, owner, layout('B'));
  const res = ok(
    t,
    await batch([
      { id: a.id, name: 'A2' },
      { id: b.id, fields: { ...b.fields, source: { column: 'B Store' } } },
      { id: a.id, fields: { ...a.fields, currency: { constant: 'JPY' } } },
    ]),
  );
  t.same(
    res.data.map((m: any) => [m.id, m.revision]),
    [
      [a.id, 2],
      [b.id, 2],
      [a.id, 3],
    ],
  );
  const finalA = (await get(a.id)).data;
  t.match(finalA, { name: 'A2', revision: 3, fields: { currency: { constant: 'JPY' } } });
  t.same(res.data[2], finalA, 'the last update of an id returns its final state');
  t.same(
    (await mappingEvents(srv, org, a.id)).map((e) => e[0]),
    ['mapping.batchUpdate', 'mapping.batchUpdate', 'mapping.create'],
  );
});

t.test('one failing update rolls back all of them, and names its index', async (t) => {
  const a = await createMapping(t, owner, layout('C'));
  const b = await createMapping(t, owner, layout('D'));
  const missingColumn = await batch([
    { id: a.id, name: 'C2' },
    { id: b.id, fields: { ...b.fields, units: { column: 'Quantity' } } },
  ]);
  isError(t, missingColumn, 'BAD_REQUEST', 'MAPPING_COLUMN_UNKNOWN');
  t.same(details(missingColumn), {
    index: 1,
    fields: [
      { path: 'fields.units.column', message: 'column "Quantity" is not among the headers' },
    ],
  });
  t.match(missingColumn.ok ? null : missingColumn.error.message, /^updates\.1: /);
  t.match((await get(a.id)).data, { name: 'C', revision: 1 }, 'the first update was rolled back');

  const library = await libraryMapping(t, owner, 'cdbaby');
  const readOnly = await batch([
    { id: a.id, name: 'C3' },
    { id: library.id, name: 'Mine' },
  ]);
  isError(t, readOnly, 'FORBIDDEN', 'LIBRARY_MAPPING_READ_ONLY');
  t.equal(details(readOnly).index, 1);

  const unknown = await batch([
    { id: a.id, name: 'C4' },
    { id: UNKNOWN_ID, name: 'Nobody' },
  ]);
  isError(t, unknown, 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  t.same(details(unknown), { index: 1 });

  const clash = await batch([{ id: a.id, headers: b.headers, fields: b.fields }]);
  isError(t, clash, 'CONFLICT', 'MAPPING_HEADER_HASH_TAKEN');
  t.same(details(clash), { index: 0, mappingId: b.id });
  t.match((await get(a.id)).data, { name: 'C', revision: 1 });
  t.same(
    (await mappingEvents(srv, org, a.id)).map((e) => e[0]),
    ['mapping.create'],
    'no events either',
  );
});

t.test('ids of another organization are NOT_FOUND and untouched', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other, layout('Theirs'));
  isError(t, await batch([{ id: theirs.id, name: 'Mine' }]), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  t.equal(
    ok(
      t,
      await other.client.query('mapping.getMapping', {
        organizationId: other.organizationId,
        id: theirs.id,
      }),
    ).name,
    'Theirs',
  );
});

t.test('invalid batches are BAD_REQUEST', async (t) => {
  const a = await createMapping(t, owner, layout('E'));
  const cases: [string, unknown][] = [
    ['missing', undefined],
    ['empty', []],
    ['not an array', { id: a.id }],
    ['too many', Array.from({ length: 101 }, () => ({ id: a.id }))],
    ['item without id', [{ name: 'X' }]],
    ['item not an object', ['x']],
    ['bad field spec', [{ id: a.id, fields: { currency: { constant: 1 } } }]],
  ];
  for (const [label, updates] of cases)
    isError(t, await batch(updates), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
});
