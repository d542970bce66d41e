// The shared mapping library: every file is a valid, complete mapping of its own headers, header
// hashes are unique, and loading it is idempotent (a changed file is a new revision).
import { cp, mkdtemp, readdir, readFile, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import t from 'tap';
import { computeHeaderHash } from '../../workers/headerHash.ts';
import { createPool } from '../../src/db/pool.ts';
import {
  headerKey,
  mappingFieldsSchema,
  missingRequiredFields,
  referencedColumns,
} from '../../src/ingest/mappingFields.ts';
import {
  libraryDir,
  libraryEntrySchema,
  loadMappingLibrary,
  syncMappingLibrary,
} from '../../src/ingest/library.ts';
import { createTestDatabase } from '../helpers/db.ts';

const files = (await readdir(libraryDir)).filter((f) => f.endsWith('.json')).sort();
const entries = await Promise.all(
  files.map(async (f) => ({
    file: f,
    raw: JSON.parse(await readFile(path.join(libraryDir, f), 'utf8')) as any,
  })),
);

t.test('the formats the library ships', async (t) => {
  t.same(
    files.map((f) => f.replace(/\.json$/, '')).sort(),
    [
      'apple',
      'ascap-a',
      'ascap-b',
      'awal',
      'bandcamp',
      'beatport',
      'believe',
      'bmi',
      'bmi-artists',
      'cargo-digital',
      'cargo-digital-runs',
      'cdbaby',
      'distrokid',
      'distrokid-legacy',
      'mlc',
      'orchard',
      'orchard-legacy',
      'prs',
      'revelator',
      'songtrust',
      'sonosuite',
      'soundcloud',
      'soundexchange',
      'tunecore',
      'youtube-asset-raw',
    ].sort(),
  );
  // a few header lists pinned exactly as the statement-format notes quote them
  const byKey = new Map(entries.map((e) => [e.raw.key, e.raw]));
  t.same(
    byKey.get('tunecore').headers,
    'Sales Period,Posted Date,Store Name,Country Of Sale,Artist,Release Type,Release Title,Song Title,Label,UPC,Optional UPC,TC Song ID,Optional ISRC,Sales Type,# Units Sold,Per Unit Price,Net Sales,Net Sales Currency,Exchange Rate,Total Earned,Currency'.split(
      ',',
    ),
  );
  t.same(
    byKey.get('distrokid-legacy').headers,
    'Reporting Date\tSale Month\tStore\tArtist\tTitle\tISRC\tUPC\tQuantity\tTeam Percentage\tSong/Album\tCountry of Sale\tSongwriter Royalties Withheld\tEarnings (USD)'.split(
      '\t',
    ),
  );
  t.equal(byKey.get('orchard-legacy').headers[9], ' Imprint Label', 'stray spaces are kept');
  t.equal(byKey.get('orchard-legacy').headers[16], 'Track ');
  t.equal(byKey.get('bmi-artists').headers[6], 'ARTISTS ');
  t.same(
    byKey.get('awal').headers,
    byKey.get('orchard').headers.filter((h: string) => h !== 'ORIGINAL STATEMENT PERIOD'),
  );
});

t.test(
  'every file: its own key, valid fields, all required fields, columns only from its headers',
  async (t) => {
    for (const { file, raw } of entries) {
      t.ok(libraryEntrySchema.safeParse(raw).success, `${file} has the library entry shape`);
      t.ok(
        mappingFieldsSchema.safeParse(raw.fields).success,
        `${file} fields validate against mappingFieldsSchema`,
      );
      t.equal(`${raw.key}.json`, file, `${file} key`);
      t.same(missingRequiredFields(raw.fields), [], `${file} gives every required field`);
      const known = new Set((raw.headers as string[]).map(headerKey));
      t.same(
        referencedColumns(raw.fields).filter((c) => !known.has(headerKey(c))),
        [],
        `${file} reads only its headers`,
      );
      t.equal(
        new Set((raw.headers as string[]).map(headerKey)).size,
        raw.headers.length,
        `${file} header cells are distinct`,
      );
    }
  },
);

t.test('header hashes are unique', async (t) => {
  const hashes = entries.map((e) => computeHeaderHash(e.raw.headers));
  t.equal(new Set(hashes).size, hashes.length);
  const loaded = await loadMappingLibrary();
  t.same(
    loaded.map((e) => e.headerHash),
    hashes,
  );
});

t.test('a broken library is refused with every problem at once', async (t) => {
  const dir = await mkdtemp(path.join(tmpdir(), 'library-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  const good = entries.find((e) => e.raw.key === 'bandcamp')!.raw;
  await writeFile(path.join(dir, 'bandcamp.json'), JSON.stringify(good));
  await writeFile(path.join(dir, 'copy.json'), JSON.stringify({ ...good, key: 'copy' }));
  await writeFile(path.join(dir, 'broken.json'), '{ not json');
  await writeFile(
    path.join(dir, 'named.json'),
    JSON.stringify({ ...good, key: 'other', headers: ['a', 'b'] }),
  );
  await writeFile(
    path.join(dir, 'incomplete.json'),
    JSON.stringify({
      ...good,
      key: 'incomplete',
      headers: ['x'],
      fields: { royaltyEarnings: { column: 'y' } },
    }),
  );
  // aliases: of a header it has; no name two of its columns could both be
  const aliased = { ...good, headers: [...good.headers, 'extra'] };
  await writeFile(
    path.join(dir, 'aliases.json'),
    JSON.stringify({
      ...aliased,
      key: 'aliases',
      aliases: { nothing: ['x'], 'net amount': ['Item Total', 'amount'], 'item price': ['amount'] },
    }),
  );
  await writeFile(
    path.join(dir, 'aliases2.json'),
    JSON.stringify({
      ...aliased,
      headers: [...aliased.headers, 'more'],
      key: 'aliases2',
      aliases: { 'net amount': [] },
    }),
  );
  const error = await loadMappingLibrary(dir).catch((e: Error) => e);
  t.ok(error instanceof Error);
  const message = (error as Error).message;
  t.match(message, /broken\.json: not JSON/);
  t.match(message, /copy\.json: its headers hash like those of bandcamp\.json/);
  t.match(message, /named\.json: key "other" must equal the file name/);
  t.match(message, /named\.json: fields\.stmtYear\.column: column "date" is not among the headers/);
  t.match(
    message,
    /incomplete\.json: fields\.royaltyEarnings\.column: column "y" is not among the headers/,
  );
  t.match(message, /incomplete\.json: fields\.currency: is required/);
  t.match(message, /aliases\.json: aliases: "nothing" is not one of its headers/);
  t.match(
    message,
    /aliases\.json: aliases: "Item Total" of "net amount" compares like "item total"/,
  );
  t.match(message, /aliases\.json: aliases: "amount" of "item price" compares like "net amount"/);
  t.match(message, /aliases2\.json: aliases\.net amount: /, 'an empty list of names');
});

t.test(
  'syncMappingLibrary: idempotent, a changed file is a new revision, a removed one goes',
  async (t) => {
    const database = await createTestDatabase();
    const pool = createPool(database.url, 4);
    const dir = await mkdtemp(path.join(tmpdir(), 'library-'));
    t.teardown(async () => {
      await pool.end();
      await database.drop();
      await rm(dir, { recursive: true, force: true });
    });
    const keys = entries.map((e) => e.raw.key).sort();

    const first = await syncMappingLibrary(pool);
    t.same([...first.inserted].sort(), keys);
    t.same([first.updated, first.unchanged, first.removed], [[], [], []]);
    const second = await syncMappingLibrary(pool);
    t.same([second.inserted, second.updated, second.removed], [[], [], []]);
    t.same([...second.unchanged].sort(), keys);
    // two processes booting together
    const [a, b] = await Promise.all([syncMappingLibrary(pool), syncMappingLibrary(pool)]);
    t.same([a.inserted, a.updated, b.inserted, b.updated], [[], [], [], []]);

    const count = async (sql: string, params: unknown[] = []) =>
      Number((await pool.query(sql, params)).rows[0].n);
    t.equal(
      await count(`SELECT count(*) AS n FROM mappings WHERE organization_id IS NULL`),
      keys.length,
    );
    t.equal(
      await count(
        `SELECT count(*) AS n FROM mapping_revisions r JOIN mappings m ON m.id = r.mapping_id WHERE m.organization_id IS NULL`,
      ),
      keys.length,
    );
    t.equal(
      await count(
        `SELECT count(*) AS n FROM mappings WHERE organization_id IS NULL AND revision <> 1`,
      ),
      0,
    );
    const distributors = (
      await pool.query(`SELECT name FROM distributors WHERE organization_id IS NULL ORDER BY name`)
    ).rows.map((r) => r.name);
    t.same(distributors, [...new Set(entries.map((e) => e.raw.distributor as string))].sort());
    const stored = (
      await pool.query(
        `SELECT headers, header_hash, fields, name FROM mappings WHERE library_key = 'tunecore'`,
      )
    ).rows[0];
    const tunecore = entries.find((e) => e.raw.key === 'tunecore')!.raw;
    t.same(stored, {
      headers: tunecore.headers,
      header_hash: computeHeaderHash(tunecore.headers),
      fields: tunecore.fields,
      name: tunecore.name,
    });

    // a changed file: one new revision, with the new content
    await cp(libraryDir, dir, { recursive: true });
    const changed = {
      ...tunecore,
      fields: {
        ...tunecore.fields,
        royaltyRate: undefined,
        grossRoyaltyEarnings: { column: 'Net Sales' },
      },
    };
    await writeFile(path.join(dir, 'tunecore.json'), JSON.stringify(changed));
    const third = await syncMappingLibrary(pool, dir);
    t.same(third.updated, ['tunecore']);
    t.same(third.inserted, []);
    const row = (
      await pool.query(`SELECT id, revision, fields FROM mappings WHERE library_key = 'tunecore'`)
    ).rows[0];
    t.equal(row.revision, 2);
    t.same(row.fields.grossRoyaltyEarnings, { column: 'Net Sales' });
    t.notOk('royaltyRate' in row.fields);
    t.same(
      (
        await pool.query(
          `SELECT revision, changed_by FROM mapping_revisions WHERE mapping_id = $1 ORDER BY revision`,
          [row.id],
        )
      ).rows,
      [
        { revision: 1, changed_by: null },
        { revision: 2, changed_by: null },
      ],
    );
    t.same((await syncMappingLibrary(pool, dir)).updated, [], 'and again nothing');

    // aliases are stored with the library row (matching by columns reads them from there); a change
    // of aliases alone changes which files the mapping matches, not what it reads: no revision
    const aliased = entries.find((e) => e.raw.aliases !== undefined)!.raw;
    t.same(
      (await pool.query(`SELECT aliases FROM mappings WHERE library_key = $1`, [aliased.key]))
        .rows[0].aliases,
      aliased.aliases,
    );
    t.same(
      (await pool.query(`SELECT aliases FROM mappings WHERE library_key = 'tunecore'`)).rows[0]
        .aliases,
      tunecore.aliases ?? {},
    );
    const [firstHeader] = changed.headers as string[];
    await writeFile(
      path.join(dir, 'tunecore.json'),
      JSON.stringify({ ...changed, aliases: { [firstHeader!]: ['Some Other Name'] } }),
    );
    t.same((await syncMappingLibrary(pool, dir)).updated, ['tunecore'], 'an alias changed');
    const aliasedRow = (
      await pool.query(`SELECT revision, aliases FROM mappings WHERE library_key = 'tunecore'`)
    ).rows[0];
    t.same(aliasedRow, { revision: 2, aliases: { [firstHeader!]: ['Some Other Name'] } });
    t.equal(
      await count(`SELECT count(*) AS n FROM mapping_revisions WHERE mapping_id = $1`, [row.id]),
      2,
      'no revision for aliases',
    );
    await writeFile(path.join(dir, 'tunecore.json'), JSON.stringify(changed));

    // a removed file: its mapping goes; statements would keep their rows
    await unlink(path.join(dir, 'songtrust.json'));
    const fourth = await syncMappingLibrary(pool, dir);
    t.same(fourth.removed, ['songtrust']);
    t.equal(await count(`SELECT count(*) AS n FROM mappings WHERE library_key = 'songtrust'`), 0);
    // back to the shipped library
    const fifth = await syncMappingLibrary(pool);
    t.same(fifth.inserted, ['songtrust']);
    t.same(fifth.updated, ['tunecore']);
    t.equal(
      (await pool.query(`SELECT revision FROM mappings WHERE library_key = 'tunecore'`)).rows[0]
        .revision,
      3,
    );
  },
);
