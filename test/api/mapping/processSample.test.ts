// mapping.processSample: a mapping tried on real rows of a statement, through the pipeline's own
// code (locate, normalize in a worker); nothing is saved.
import t from 'tap';
import { createRightsholder, putFile } from '../../helpers/ingest.ts';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createMapping, FIELDS, HEADERS, insertStatement, UNKNOWN_ID } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Sample Artist');

const rows = [
  ['2024-03', 'Spotify', 'Summer Nights', 'US-RC1-24-00001', 'US', '1000', '3.125'],
  ['2024-03', 'Apple Music', 'Summer Nights', 'USRC12400001', 'DE', '200', '1.10'],
  ['2024-03', 'Deezer', 'Winter Song', 'FRXYZ2400002', 'FR', '50', '(0.25)'],
  ['2024-03', 'Tidal', 'Winter Song', 'not an isrc', 'XX', '7', '0.07'],
  ['2024-03', 'Amazon', 'Spring', 'GBAAA2400003', 'GB', '9', '0.09'],
  ['2024-03', 'YouTube', 'Spring', 'GBAAA2400003', 'GB', '11', '0.11'],
  ['2024-03', 'Napster', 'Autumn', 'GBAAA2400004', 'GB', '13', '0.13'],
];
const bytes = Buffer.from([HEADERS, ...rows].map((r) => r.join(',')).join('\n') + '\n');
const { statementId } = await putFile(owner.client, org, artist, 'sample_2024-03_EUR.csv', bytes);
const sample = (input: Record<string, unknown>) =>
  owner.client.mutate('mapping.processSample', { organizationId: org, statementId, ...input });

t.test(
  'defaults: data rows 0 to 5 of the statement, normalized as the pipeline does',
  async (t) => {
    const res = ok(t, await sample({ mapping: FIELDS }));
    t.match(res, {
      statementId,
      mappingId: null,
      startRow: 0,
      endRow: 5,
      header: HEADERS,
      fields: FIELDS,
    });
    t.equal(res.rows.length, 5);
    t.match(res.rows[0], {
      source_row: 1,
      stmt_year: 2024,
      stmt_period: 3,
      stmt_cadence: 'M',
      currency: 'EUR',
      source: 'Spotify',
      raw_title: 'Summer Nights',
      isrc: 'USRC12400001',
      country: 'US',
    });
    t.equal(Number(res.rows[0]?.royalty_earnings), 3.125);
    t.equal(Number(res.rows[2]?.royalty_earnings), -0.25, 'parenthesised negatives');
    t.equal(res.rows[3]?.isrc, null, 'an invalid ISRC is reported, not guessed');
    t.ok(res.issues.invalidIsrc >= 1);
    t.equal(
      ok(
        t,
        await owner.client.mutate('upload.statements', {
          organizationId: org,
          filter: { statementIds: [statementId] },
        }),
      ).items[0]?.status,
      'uploaded',
      'nothing saved',
    );
  },
);

t.test('a window of rows, a saved mapping by id, variables and the file name', async (t) => {
  const saved = await createMapping(t, owner, {
    fields: { ...FIELDS, currency: { fromFileName: 'currency' }, payor: { variable: 'payor' } },
  });
  const res = ok(
    t,
    await sample({
      mappingId: saved.id,
      startRow: 5,
      endRow: 7,
      variables: { payor: 'Our Payor' },
    }),
  );
  t.equal(res.mappingId, saved.id);
  t.same(
    res.rows.map((r: any) => [r.source_row, r.source, r.currency, r.payor]),
    [
      [6, 'YouTube', 'EUR', 'Our Payor'],
      [7, 'Napster', 'EUR', 'Our Payor'],
    ],
  );
  const renamed = ok(
    t,
    await sample({ mappingId: saved.id, fileName: 'statement_GBP.csv', endRow: 1 }),
  );
  t.equal(renamed.rows[0]?.currency, 'GBP', 'fileName overrides the name fromFileName reads');
  // the mapping given wins over the saved one's fields
  t.equal(
    ok(t, await sample({ mappingId: saved.id, mapping: FIELDS, endRow: 1 })).rows[0]?.currency,
    'EUR',
  );
});

t.test(
  'startRow past the default endRow, without endRow: the next 5 rows (was VALIDATION_FAILED)',
  async (t) => {
    const res = ok(t, await sample({ mapping: FIELDS, startRow: 5 }));
    t.same(
      [res.startRow, res.endRow, res.rows.map((r: any) => [r.source_row, r.source])],
      [
        5,
        10,
        [
          [6, 'YouTube'],
          [7, 'Napster'],
        ],
      ],
    );
    t.same(
      ok(t, await sample({ mapping: FIELDS, startRow: 3 })).rows.map((r: any) => r.source_row),
      [4, 5],
      'below it, up to 5',
    );
    const far = ok(t, await sample({ mapping: FIELDS, startRow: 100 }));
    t.same([far.startRow, far.endRow, far.rows], [100, 105, []]);
    isError(
      t,
      await sample({ mapping: FIELDS, startRow: 6, endRow: 5 }),
      'BAD_REQUEST',
      'VALIDATION_FAILED',
    );
    // a statement id sent in capitals is answered as stored
    t.equal(
      ok(t, await sample({ mapping: FIELDS, statementId: statementId.toUpperCase() })).statementId,
      statementId,
    );
  },
);

t.test('mapping errors', async (t) => {
  isError(
    t,
    await sample({ mapping: { royaltyEarnings: { column: 'Net (EUR)' } } }),
    'BAD_REQUEST',
    'MAPPING_REQUIRED_FIELDS_MISSING',
  );
  isError(
    t,
    await sample({ mapping: { ...FIELDS, units: { column: 'Quantity' } } }),
    'BAD_REQUEST',
    'MAPPING_COLUMN_MISSING',
  );
  isError(t, await sample({ mappingId: UNKNOWN_ID }), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
  const other = await newOrganization(srv, 'Other');
  const theirs = await createMapping(t, other);
  isError(t, await sample({ mappingId: theirs.id }), 'NOT_FOUND', 'MAPPING_NOT_FOUND');
});

t.test('statements: unknown, foreign, without a file', async (t) => {
  isError(
    t,
    await sample({ statementId: UNKNOWN_ID, mapping: FIELDS }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  const other = await newOrganization(srv, 'Foreign');
  const foreign = await insertStatement(srv, other.organizationId, { status: 'uploaded' });
  isError(
    t,
    await sample({ statementId: foreign, mapping: FIELDS }),
    'NOT_FOUND',
    'STATEMENT_NOT_FOUND',
  );
  const uploading = await insertStatement(srv, org, { status: 'uploading', headers: null });
  isError(
    t,
    await sample({ statementId: uploading, mapping: FIELDS }),
    'CONFLICT',
    'STATEMENT_STATE_CONFLICT',
  );
});

t.test('input bounds', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['neither mapping nor mappingId', {}],
    ['endRow not after startRow', { mapping: FIELDS, startRow: 5, endRow: 5 }],
    ['negative startRow', { mapping: FIELDS, startRow: -1 }],
    ['too many rows', { mapping: FIELDS, startRow: 0, endRow: 1_001 }],
    ['fractional rows', { mapping: FIELDS, endRow: 2.5 }],
    ['bad variable name', { mapping: FIELDS, variables: { 'a b': 'x' } }],
    ['variable not a string', { mapping: FIELDS, variables: { payor: 1 } }],
    [
      'too many variables',
      {
        mapping: FIELDS,
        variables: Object.fromEntries(Array.from({ length: 51 }, (_, i) => [`v${i}`, 'x'])),
      },
    ],
    ['statementId not a uuid', { mapping: FIELDS, statementId: '../../etc/passwd' }],
    ['mapping not fields', { mapping: { sql: 'DROP TABLE statements' } }],
  ];
  for (const [label, input] of cases)
    isError(t, await sample(input), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
});

t.test('roles: writer and above', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  t.equal(
    ok(
      t,
      await writer.client.mutate('mapping.processSample', {
        organizationId: org,
        statementId,
        mapping: FIELDS,
        endRow: 2,
      }),
    ).rows.length,
    2,
  );
});

t.test(
  'data access: a restricted writer previews only statements of their rightsholders',
  async (t) => {
    const theirs = await createRightsholder(owner.client, org, 'Restricted Artist');
    const restricted = await addMember(srv, org, 'writer');
    await srv.deps.pool.query(
      `INSERT INTO data_access_roles (organization_id, user_id, mode, rightsholder_ids) VALUES ($1, $2, 'restricted', $3)`,
      [org, restricted.userId, [theirs]],
    );
    const res = await restricted.client.mutate('mapping.processSample', {
      organizationId: org,
      statementId,
      mapping: FIELDS,
      endRow: 1,
    });
    isError(
      t,
      res,
      'NOT_FOUND',
      'STATEMENT_NOT_FOUND',
      'a statement of another rightsholder is not visible',
    );
    t.equal(res.data, undefined, 'none of its rows');
  },
);
