// Which mapping a statement's header uses when no header hash matches: the library's mappings
// (and the organization's own) matched by their columns, in any order and under the other names
// the library lists, never when a column they read is absent or ambiguous; through the real
// database (the shipped library synced at start), the file reader and the normalizer, to the cent.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { normalizeStatement } from '../../workers/normalize.ts';
import { locateTable } from '../../workers/statementFile.ts';
import { COLUMN_MATCH_MIN_COVERAGE, matchColumns } from '../../src/ingest/mappingFields.ts';
import { findMappingForHeader, loadMappingLibrary } from '../../src/ingest/library.ts';
import { canonicalDecimal } from '../helpers/decimal.ts';
import { normalizeInput, workDir } from '../helpers/normalize.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { repoRoot } from '../setup/paths.ts';
import { ok } from '../helpers/outcome.ts';

const library = new Map((await loadMappingLibrary()).map((e) => [e.key, e]));
const believe = library.get('believe')!;
const orchard = library.get('orchard')!;

t.test('matchColumns: order, other names, extra and missing columns', async (t) => {
  const reversed = [...believe.headers].reverse();
  const m = matchColumns(reversed, believe);
  if (!('match' in m)) throw new Error('no match');
  t.same(m.match.fields, believe.fields, 'the same columns in another order: the fields unchanged');
  t.same([m.match.renamed, m.match.missing, m.match.extra, m.match.score], [{}, [], [], 1]);

  // Country/Region (white space), Release Type (case), UPC/EAN and Currency (aliases), one column more
  const variant = believe.headers.map(
    (h) =>
      ({
        'Country / Region': 'Country/Region',
        UPC: 'UPC/EAN',
        'Client Payment Currency': 'Currency',
        'Release type': 'Release Type',
      })[h] ?? h,
  );
  const v = matchColumns([...variant, 'Sales Country Code'], believe);
  if (!('match' in v)) throw new Error('no match');
  t.same(v.match.renamed, {
    'Country / Region': 'Country/Region',
    UPC: 'UPC/EAN',
    'Client Payment Currency': 'Currency',
  });
  t.same(v.match.fields.country, { column: 'Country/Region' });
  t.same(v.match.fields.upc, { column: 'UPC/EAN' });
  t.same(v.match.fields.currency, { column: 'Currency' });
  t.same(v.match.fields.royaltyEarnings, { column: 'Net Revenue' });
  t.same([v.match.missing, v.match.extra], [[], ['Sales Country Code']]);
  t.equal(v.match.score, 21 / 22);

  // `Country` and `Country/Region` both: which is the country is not clear; neither is it read
  const both = matchColumns([...variant, 'Country'], believe);
  t.same(both, { mismatch: { absent: [], ambiguous: ['Country / Region'] } });
  // a column a field reads is absent: never a match, whatever else fits
  t.same(
    matchColumns(
      believe.headers.filter((h) => h !== 'Net Revenue'),
      believe,
    ),
    { mismatch: { absent: ['Net Revenue'], ambiguous: [] } },
  );
  // the same name twice in the file (`Net Revenue`, `Net Revenue`)
  t.same(matchColumns([...believe.headers, 'net revenue'], believe), {
    mismatch: { absent: [], ambiguous: ['Net Revenue'] },
  });
  // a header unused by the fields may be missing
  const fewer = matchColumns(
    believe.headers.filter((h) => h !== 'Label Name'),
    believe,
  );
  t.same('match' in fewer && [fewer.match.missing, fewer.match.score], [['Label Name'], 20 / 21]);
});

t.test('matchColumns: too few shared columns is another layout', async (t) => {
  // a tiny mapping's columns inside a wide file of another layout
  const tiny = {
    headers: ['date', 'amount', 'notes', 'ref', 'payee', 'memo'],
    fields: {
      stmtYear: { column: 'date' },
      stmtPeriod: { column: 'date' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'amount' },
    },
  };
  const wide = ['date', 'amount', ...Array.from({ length: 8 }, (_, i) => `col ${i}`)];
  t.same(matchColumns(wide, tiny), {
    mismatch: { absent: [], ambiguous: [], coverage: { mapping: 2 / 6, file: 2 / 10 } },
  });
  t.equal(COLUMN_MATCH_MIN_COVERAGE, 0.6);
  // hostile headers: blank cells, zero-width characters, names of Object's own properties
  t.same(matchColumns(['', ' ', '\u200b'], believe), {
    mismatch: {
      absent: [
        ...new Set(Object.values(believe.fields).flatMap((s) => (s.column ? [s.column] : []))),
      ],
      ambiguous: [],
      coverage: { mapping: 0, file: 0 },
    },
  });
  const protoNames = ['__proto__', 'constructor', 'toString', 'hasOwnProperty'];
  const proto = matchColumns(protoNames, {
    headers: protoNames,
    fields: {
      stmtYear: { column: '__proto__' },
      stmtPeriod: { column: 'constructor' },
      stmtCadence: { constant: 'M' },
      currency: { constant: 'USD' },
      royaltyEarnings: { column: 'toString' },
    },
    aliases: { hasOwnProperty: ['valueOf'] },
  });
  t.same('match' in proto && proto.match.fields, {
    stmtYear: { column: '__proto__' },
    stmtPeriod: { column: 'constructor' },
    stmtCadence: { constant: 'M' },
    currency: { constant: 'USD' },
    royaltyEarnings: { column: 'toString' },
  });
  const zw = matchColumns(
    believe.headers.map((h) => (h === 'Net Revenue' ? '\u200bNet\u00a0Revenue\ufeff' : h)),
    believe,
  );
  t.same(
    'match' in zw && zw.match.fields.royaltyEarnings,
    { column: '\u200bNet\u00a0Revenue\ufeff' },
    'the file cell as the file writes it',
  );
  // a thousand columns more: every one of the mapping's is there, so it is its layout; one pass
  const many = [...believe.headers, ...Array.from({ length: 1_000 }, (_, i) => `x${i}`)];
  const started = performance.now();
  const wideMatch = matchColumns(many, believe);
  t.same('match' in wideMatch && [wideMatch.match.extra.length, wideMatch.match.score], [
    1_000,
    21 / 1_021,
  ]);
  t.ok(performance.now() - started < 200, 'fast on wide headers');
});

const srv = await startTestServer(t, { role: 'api' });
const owner = await newOrganization(srv, 'Match Label');
const org = owner.organizationId;
const pool = srv.deps.pool;

t.test(
  'findMappingForHeader: the header hash first, then the columns; never a mapping with an absent column',
  async (t) => {
    const exact = await findMappingForHeader(pool, org, believe.headers);
    t.match(exact?.match, { by: 'header_hash', source: 'library', libraryKey: 'believe' });
    t.same(exact?.mapping.fields, believe.fields);

    const variant = believe.headers.map(
      (h) => ({ 'Country / Region': 'Country/Region', UPC: 'UPC/EAN' })[h] ?? h,
    );
    const found = await findMappingForHeader(pool, org, variant);
    t.same(found?.match, {
      by: 'columns',
      source: 'library',
      mappingId: exact!.mapping.id,
      libraryKey: 'believe',
      revision: exact!.mapping.revision,
      renamed: { 'Country / Region': 'Country/Region', UPC: 'UPC/EAN' },
      missing: [],
      extra: [],
    });
    t.same(found?.mapping.fields.upc, { column: 'UPC/EAN' });
    t.same(
      found?.mapping.fields.country,
      { column: 'Country/Region' },
      'white space inside a name compares loosely',
    );

    t.equal(
      await findMappingForHeader(
        pool,
        org,
        variant.filter((h) => h !== 'Net Revenue'),
      ),
      null,
      'the earnings column absent',
    );
    t.equal(
      await findMappingForHeader(pool, org, [...variant, 'Country']),
      null,
      'the country column ambiguous',
    );
    t.equal(await findMappingForHeader(pool, org, ['a', 'b', 'c']), null);
    t.equal(await findMappingForHeader(pool, org, Array(300).fill('')), null, 'blank header cells');

    // the Orchard's columns reversed: the Orchard's mapping (all 31), not AWAL's (30 of them)
    const reversed = [...orchard.headers].reverse();
    const o = await findMappingForHeader(pool, org, reversed);
    t.match(o?.match, { by: 'columns', libraryKey: 'orchard', missing: [], extra: [] });
    const awal = await findMappingForHeader(pool, org, [...library.get('awal')!.headers].reverse());
    t.match(awal?.match, { by: 'columns', libraryKey: 'awal', missing: [], extra: [] });
  },
);

t.test(
  "findMappingForHeader: the organization's own mapping wins, by hash and by columns; two as good are no match",
  async (t) => {
    const other = await newOrganization(srv, 'Other Label');
    const fields = { ...orchard.fields, source: { column: 'SERVICE DETAIL' } };
    const own = ok(
      t,
      await other.client.mutate('mapping.create', {
        organizationId: other.organizationId,
        name: 'Our Orchard',
        headers: orchard.headers,
        headerHash: computeHeaderHash(orchard.headers),
        fields,
      }),
    );
    const byHash = await findMappingForHeader(pool, other.organizationId, orchard.headers);
    t.match(byHash?.match, {
      by: 'header_hash',
      source: 'organization',
      mappingId: own.id,
      libraryKey: null,
    });
    const reversed = [...orchard.headers].reverse();
    const byColumns = await findMappingForHeader(pool, other.organizationId, reversed);
    t.match(byColumns?.match, { by: 'columns', source: 'organization', mappingId: own.id });
    t.same(byColumns?.mapping.fields.source, { column: 'SERVICE DETAIL' }, 'its own fields');
    // the first organization has no such mapping: the library's
    t.match((await findMappingForHeader(pool, org, reversed))?.match, {
      source: 'library',
      libraryKey: 'orchard',
    });

    // a second mapping of the organization with the same columns in another order: as good a match
    const rotated = [...orchard.headers.slice(1), orchard.headers[0]!];
    ok(
      t,
      await other.client.mutate('mapping.create', {
        organizationId: other.organizationId,
        name: 'Our Orchard, rotated',
        headers: rotated,
        headerHash: computeHeaderHash(rotated),
        fields,
      }),
    );
    t.equal(
      await findMappingForHeader(pool, other.organizationId, reversed),
      null,
      'the user decides',
    );
    t.match(
      (await findMappingForHeader(pool, other.organizationId, rotated))?.match,
      { by: 'header_hash', source: 'organization' },
      'its exact header still matches',
    );
  },
);

const variantsDir = path.join(repoRoot, 'fixtures', 'statements', 'variants');
const variants = readdirSync(variantsDir)
  .filter((f) => f.endsWith('.expected.json'))
  .sort()
  .map(
    (f) =>
      JSON.parse(readFileSync(path.join(variantsDir, f), 'utf8')) as {
        file: string;
        source: string;
        dataRecords: number;
        netEarningsSum: string;
        unitsSum: string;
        period: string;
      },
  );
const libraryKeyOf: Record<string, [string, Record<string, string>]> = {
  'variants/believe-country-region.csv': [
    'believe',
    { 'Country / Region': 'Country/Region', UPC: 'UPC/EAN' },
  ],
  'variants/bmi-royalty-amt.csv': ['bmi', { 'ROYALTY AMOUNT': 'Royalty Amt' }],
  'variants/orchard-legacy-dms.csv': [
    'orchard-legacy',
    { Retailer: 'DMS', 'Product UPC': 'Orchard UPC' },
  ],
  'variants/orchard-reordered.csv': ['orchard', {}],
};

t.test('the variant fixtures: matched by their columns and read to the cent', async (t) => {
  t.same(
    variants.map((v) => v.file),
    Object.keys(libraryKeyOf),
  );
  for (const expected of variants) {
    t.test(expected.file, async (t) => {
      const dir = await workDir(t);
      const file = path.join(repoRoot, 'fixtures', 'statements', expected.file);
      const located = await locateTable({
        sourcePath: file,
        fileName: path.basename(file),
        workDir: dir,
      });
      if (!located.ok) throw new Error(located.message);
      const [key, renamed] = libraryKeyOf[expected.file]!;
      t.not(located.headerHash, library.get(key)!.headerHash, 'no header hash of the library');
      const found = await findMappingForHeader(pool, org, located.header);
      t.match(found?.match, { by: 'columns', source: 'library', libraryKey: key });
      t.same(found?.match.renamed, renamed);
      const out = await normalizeStatement(
        normalizeInput(located, found!.mapping.fields, dir, { fileName: path.basename(file) }),
      );
      if (!out.ok) throw new Error(out.message);
      t.equal(out.keptRows, expected.dataRecords, 'every row kept');
      t.equal(
        canonicalDecimal(out.net!),
        canonicalDecimal(expected.netEarningsSum),
        'net earnings to the last decimal',
      );
      t.equal(canonicalDecimal(out.units!), canonicalDecimal(expected.unitsSum), 'units');
      const s = out.stmt!;
      t.equal(
        s.cadence === 'M'
          ? `${s.year}-${String(s.period).padStart(2, '0')}`
          : `${s.year}${s.cadence}${s.period}`,
        expected.period,
        'statement period',
      );
      t.same(
        out.issues.missingStmtPeriod + out.issues.invalidAmounts + out.issues.missingAmounts,
        0,
      );
    });
  }
});
