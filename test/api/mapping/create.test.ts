// mapping.create: the organization's own mapping for a header layout; it then wins over the library's.
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
  libraryMapping,
  mappingEvents,
  UNKNOWN_ID,
} from './helpers.ts';
import { details, isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;

t.test('creates revision 1 with the exact content, and records it', async (t) => {
  const distributor = await createDistributor(t, owner, 'Our Distributor');
  const created = await createMapping(t, owner, {
    name: '  Our layout  ',
    distributorId: distributor.id,
    fileCategories: { kind: 'digital' },
  });
  t.match(created, {
    organizationId: org,
    source: 'organization',
    libraryKey: null,
    distributorId: distributor.id,
    distributorName: 'Our Distributor',
    name: 'Our layout',
    headers: HEADERS,
    headerHash: HASH,
    fields: FIELDS,
    fileCategories: { kind: 'digital' },
    revision: 1,
    active: true,
    createdById: owner.userId,
  });
  t.match(created.id, /^[0-9a-f-]{36}$/);
  const revisions = ok(
    t,
    await owner.client.query('mapping.revision.listByMapping', {
      organizationId: org,
      mappingId: created.id,
    }),
  );
  t.same(
    revisions.data.map((r: any) => [r.revision, r.fields, r.changedById]),
    [[1, FIELDS, owner.userId]],
  );
  t.same(await mappingEvents(srv, org, created.id), [['mapping.create', null]]);
});

t.test('headerHash must be the header hash of the headers', async (t) => {
  const headers = ['A', 'B'];
  const res = await owner.client.mutate('mapping.create', {
    organizationId: org,
    headers,
    headerHash: HASH,
    fields: {},
  });
  isError(t, res, 'BAD_REQUEST', 'MAPPING_HEADER_HASH_MISMATCH');
  t.same(details(res), { given: HASH, expected: computeHeaderHash(headers) });
  // the hash is case-insensitive hex, the cells compare as DESIGN.md says (trimmed, lower-cased, spaces collapsed)
  const spaced = ['  PERIOD ', 'store', 'TRACK', 'isrc', 'country', 'QTY', 'net   (eur)'];
  t.equal(computeHeaderHash(spaced), HASH);
  const other = await newOrganization(srv, 'Hash Case');
  const made = ok(
    t,
    await other.client.mutate('mapping.create', {
      organizationId: other.organizationId,
      headers: spaced,
      headerHash: HASH.toUpperCase(),
      fields: FIELDS,
    }),
  );
  t.equal(made.headerHash, HASH);
  t.same(made.headers, spaced, 'headers are kept as given');
});

t.test('all five required fields are needed, and fields name only header columns', async (t) => {
  const other = await newOrganization(srv, 'Required');
  const input = { organizationId: other.organizationId, headers: HEADERS, headerHash: HASH };
  const missing = await other.client.mutate('mapping.create', {
    ...input,
    fields: { royaltyEarnings: { column: 'Net (EUR)' } },
  });
  isError(t, missing, 'BAD_REQUEST', 'MAPPING_REQUIRED_FIELDS_MISSING');
  t.same(
    details(missing).fields.map((f: any) => f.path),
    ['fields.stmtYear', 'fields.stmtPeriod', 'fields.stmtCadence', 'fields.currency'],
  );
  isError(
    t,
    await other.client.mutate('mapping.create', input),
    'BAD_REQUEST',
    'MAPPING_REQUIRED_FIELDS_MISSING',
    'no fields at all',
  );
  const unknown = await other.client.mutate('mapping.create', {
    ...input,
    fields: {
      ...FIELDS,
      units: { column: 'Quantity' },
      rawArtist: { columns: ['Track', 'Artist'] },
    },
  });
  isError(t, unknown, 'BAD_REQUEST', 'MAPPING_COLUMN_UNKNOWN');
  t.same(details(unknown).fields, [
    { path: 'fields.units.column', message: 'column "Quantity" is not among the headers' },
    { path: 'fields.rawArtist.columns.1', message: 'column "Artist" is not among the headers' },
  ]);
  // columns match as header cells do: trimmed, ignoring case and inner space
  ok(
    t,
    await other.client.mutate('mapping.create', {
      ...input,
      fields: { ...FIELDS, royaltyEarnings: { column: ' net  (EUR) ' } },
    }),
  );
});

t.test('the field language itself is checked', async (t) => {
  const other = await newOrganization(srv, 'Language');
  const input = { organizationId: other.organizationId, headers: HEADERS, headerHash: HASH };
  const cases: [string, unknown][] = [
    ['unknown field', { ...FIELDS, royalties: { column: 'Qty' } }],
    ['two sources', { ...FIELDS, currency: { constant: 'EUR', column: 'Store' } }],
    ['no source', { ...FIELDS, currency: {} }],
    ['unknown key', { ...FIELDS, currency: { constant: 'EUR', sql: 'DROP TABLE x' } }],
    ['bad format', { ...FIELDS, royaltyEarnings: { column: 'Net (EUR)', format: 'comma' } }],
    ['bad variable', { ...FIELDS, currency: { variable: '1; DROP' } }],
    ['bad fromFileName', { ...FIELDS, currency: { fromFileName: 'anything' } }],
    ['not an object', 'fields'],
    [
      'too many columns',
      { ...FIELDS, composers: { columns: Array.from({ length: 21 }, () => 'Track') } },
    ],
    ['NUL in a constant', { ...FIELDS, currency: { constant: 'EU\u0000R' } }],
  ];
  for (const [label, fields] of cases) {
    isError(
      t,
      await other.client.mutateUnchecked('mapping.create', { ...input, fields }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      label,
    );
  }
  const headerCases: [string, unknown][] = [
    ['empty', []],
    ['not strings', [1, 2]],
    ['too many', Array.from({ length: 1_001 }, (_, i) => `h${i}`)],
    ['too long', ['x'.repeat(1_001)]],
    ['NUL', ['A\u0000']],
  ];
  for (const [label, headers] of headerCases) {
    isError(
      t,
      await other.client.mutateUnchecked('mapping.create', { ...input, headers, fields: FIELDS }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
      `headers ${label}`,
    );
  }
  const blank = ['', ' '];
  const res = await other.client.mutate('mapping.create', {
    ...input,
    headers: blank,
    headerHash: computeHeaderHash(blank),
    fields: {
      stmtYear: { fromFileName: 'period' },
      stmtPeriod: { fromFileName: 'period' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'EUR' },
      royaltyEarnings: { constant: '0' },
    },
  });
  isError(t, res, 'BAD_REQUEST', 'MAPPING_COLUMN_UNKNOWN', 'only blank header cells');
  isError(
    t,
    await other.client.mutate('mapping.create', { ...input, headerHash: 'abc', fields: FIELDS }),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
    'a hash that is no hash',
  );
});

t.test(
  'one mapping per header hash in an organization; another organization may have its own',
  async (t) => {
    const a = await newOrganization(srv, 'Dup A');
    const b = await newOrganization(srv, 'Dup B');
    const first = await createMapping(t, a);
    const dup = await a.client.mutate('mapping.create', {
      organizationId: a.organizationId,
      headers: HEADERS,
      headerHash: HASH,
      fields: FIELDS,
    });
    isError(t, dup, 'CONFLICT', 'MAPPING_HEADER_HASH_TAKEN');
    t.same(details(dup), { mappingId: first.id });
    const theirs = await createMapping(t, b);
    t.not(theirs.id, first.id);
  },
);

t.test('an organization mapping for library headers wins over the library one', async (t) => {
  const other = await newOrganization(srv, 'Override');
  const dk = await libraryMapping(t, other, 'distrokid');
  t.equal(dk.active, true);
  const custom = await createMapping(t, other, {
    name: 'Our DistroKid',
    headers: dk.headers,
    fields: { ...dk.fields, currency: { constant: 'EUR' } },
    distributorId: dk.distributorId,
  });
  t.match(custom, {
    headerHash: dk.headerHash,
    distributorName: 'DistroKid',
    source: 'organization',
    active: true,
  });
  const found = ok(
    t,
    await other.client.query('mapping.getMapping', {
      organizationId: other.organizationId,
      headerHash: dk.headerHash,
    }),
  );
  t.equal(found.id, custom.id);
  t.equal(
    (await libraryMapping(t, other, 'distrokid')).active,
    false,
    'the library mapping is shadowed in this organization',
  );
  t.equal(
    (await libraryMapping(t, owner, 'distrokid')).active,
    true,
    'and only in this organization',
  );
});

t.test("distributorId must be visible: the organization's own or the library's", async (t) => {
  const other = await newOrganization(srv, 'Foreign Distributor');
  const theirs = await createDistributor(t, other, 'Theirs');
  const input = {
    organizationId: org,
    headers: ['X1', 'Y1'],
    headerHash: computeHeaderHash(['X1', 'Y1']),
  };
  const fields = {
    stmtYear: { column: 'X1' },
    stmtPeriod: { column: 'X1' },
    stmtCadence: { constant: 'Q' },
    currency: { constant: 'USD' },
    royaltyEarnings: { column: 'Y1' },
  };
  isError(
    t,
    await owner.client.mutate('mapping.create', { ...input, fields, distributorId: theirs.id }),
    'NOT_FOUND',
    'DISTRIBUTOR_NOT_FOUND',
  );
  isError(
    t,
    await owner.client.mutate('mapping.create', { ...input, fields, distributorId: UNKNOWN_ID }),
    'NOT_FOUND',
    'DISTRIBUTOR_NOT_FOUND',
  );
  const library = await libraryMapping(t, owner, 'tunecore');
  const made = ok(
    t,
    await owner.client.mutate('mapping.create', {
      ...input,
      fields,
      distributorId: [library.distributorId],
    }),
  );
  t.equal(made.distributorName, 'TuneCore');
});

t.test('roles: admin and above', async (t) => {
  const admin = await addMember(srv, org, 'admin');
  const headers = ['Admin Col', 'Money'];
  ok(
    t,
    await admin.client.mutate('mapping.create', {
      organizationId: org,
      headers,
      headerHash: computeHeaderHash(headers),
      fields: {
        stmtYear: { fromFileName: 'period' },
        stmtPeriod: { fromFileName: 'period' },
        stmtCadence: { fromFileName: 'period' },
        currency: { variable: 'currency' },
        royaltyEarnings: { column: 'Money' },
      },
    }),
  );
});
