// Rightsholder names and other text from a hostile client: the same name in another Unicode form
// (NFD, a combining accent) or case is the same name; control characters and names with nothing
// visible are refused; concurrent creates of one name leave one rightsholder; over-long names and
// over-large batches are refused before anything is written.
import t from 'tap';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createRightsholder } from './helpers.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Hostile Names');
const org = owner.organizationId;
const db = srv.deps.pool;

const create = (input: Record<string, unknown>) =>
  owner.client.mutateUnchecked('rightsholder.create', { organizationId: org, ...input });
const update = (input: Record<string, unknown>) =>
  owner.client.mutateUnchecked('rightsholder.updateById', { organizationId: org, ...input });
const batch = (updates: unknown) =>
  owner.client.mutateUnchecked('rightsholder.batchUpdate', { organizationId: org, updates });
const count = async () =>
  (
    await db.query<{ n: number }>(
      'SELECT count(*)::int AS n FROM rightsholders WHERE organization_id = $1',
      [org],
    )
  ).rows[0]!.n;

const NFC = 'Beyonc\u00e9';
const NFD = 'Beyonce\u0301';

t.test(
  'a name with a combining accent is the same name as the composed one, and is stored composed',
  async (t) => {
    const composed = await createRightsholder(t, owner, NFC);
    isError(
      t,
      await create({ name: NFD }),
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
      'create: NFD of a taken NFC name',
    );
    isError(
      t,
      await create({ name: ` ${NFD.toUpperCase()} ` }),
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
      'create: NFD, other case, spaces',
    );
    const zoe = await createRightsholder(t, owner, 'Zoe\u0308', {
      legalName: 'Zoe\u0308 Ltd',
      aliases: ['Zoe\u0308', 'Zo\u00eb', 'Ame\u0301lie'],
    });
    t.same(
      [zoe.name, zoe.legalName, zoe.aliases],
      ['Zo\u00eb', 'Zo\u00eb Ltd', ['Zo\u00eb', 'Am\u00e9lie']],
      'stored in NFC; aliases de-duplicated after it',
    );
    isError(
      t,
      await create({ name: 'Zo\u00eb' }),
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
      'create: NFC of a name sent in NFD',
    );
    isError(
      t,
      await update({ id: zoe.id, name: NFD }),
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
      'updateById: renamed onto the NFD form',
    );
    const res = await batch([
      { id: zoe.id, legalName: 'ok' },
      { id: zoe.id, name: NFD.toLowerCase() },
    ]);
    isError(
      t,
      res,
      'CONFLICT',
      'RIGHTSHOLDER_NAME_TAKEN',
      'batchUpdate: renamed onto the NFD form',
    );
    t.same((res as any).error.data.details, { index: 1 });
    // renaming to its own name in the other form changes nothing
    const same = ok(t, await update({ id: composed.id, name: NFD }));
    t.equal(same.name, NFC);
    t.equal(same.updatedAt, composed.updatedAt, 'nothing written');
    const { rows } = await db.query<{ name: string; legal_name: string }>(
      'SELECT name, legal_name FROM rightsholders WHERE id = $1',
      [zoe.id],
    );
    t.same(
      rows,
      [{ name: 'Zo\u00eb', legal_name: 'Zo\u00eb Ltd' }],
      'the failed batch changed nothing',
    );
    // 200 letters with 200 combining accents are 200 characters once composed
    const long = ok(t, await create({ name: 'e\u0301'.repeat(200) }));
    t.equal(long.name, '\u00e9'.repeat(200));
  },
);

t.test(
  'control characters and names with nothing visible are VALIDATION_FAILED, nothing written',
  async (t) => {
    const r = await createRightsholder(t, owner, 'Clean Name');
    const before = await count();
    const cases: [string, Record<string, unknown>][] = [
      ['bell in name', { name: 'A\u0007B' }],
      ['line break in name', { name: 'Line\nBreak' }],
      ['tab in name', { name: 'Tab\tInside' }],
      ['C1 control in name', { name: 'Next\u0085Line' }],
      ['DEL in name', { name: 'Del\u007f' }],
      ['only a zero-width space', { name: '\u200b' }],
      ['only invisible characters and spaces', { name: '\u200b \u200d\u2060 \ufeff' }],
      ['only no-break spaces', { name: '\u00a0\u00a0' }],
      ['only spaces', { name: '     ' }],
      ['10,000 characters', { name: 'x'.repeat(10_000) }],
      ['line break in legalName', { name: 'Fine', legalName: 'Legal\r\nName' }],
      ['tab in an alias', { name: 'Fine', aliases: ['a\tb'] }],
      ['invisible alias', { name: 'Fine', aliases: ['\u200b'] }],
      ['line break in an identifier', { name: 'Fine', streamingArtistIds: ['id\n1'] }],
    ];
    for (const [label, input] of cases) {
      isError(t, await create(input), 'BAD_REQUEST', 'VALIDATION_FAILED', `create: ${label}`);
      isError(
        t,
        await update({ id: r.id, name: 'Clean Name', ...input }),
        'BAD_REQUEST',
        'VALIDATION_FAILED',
        `updateById: ${label}`,
      );
      isError(
        t,
        await batch([{ id: r.id, ...input }]),
        'BAD_REQUEST',
        'VALIDATION_FAILED',
        `batchUpdate: ${label}`,
      );
    }
    const res = await create({ name: 'A\u0007B' });
    t.match((res as any).error.message, /name: must not contain control characters/);
    t.equal(await count(), before, 'nothing created');
    t.match(
      ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id })),
      { name: 'Clean Name', legalName: null, aliases: [] },
    );
    // invisible characters inside a name that has something to see are kept
    const band = ok(t, await create({ name: '\u{1F469}\u200d\u{1F3A4} Band' }));
    t.equal(band.name, '\u{1F469}\u200d\u{1F3A4} Band');
  },
);

t.test(
  'concurrent creates of one name in different case and form: one rightsholder, the rest CONFLICT',
  async (t) => {
    const names = [
      'Race Ensemble',
      'race ensemble',
      ' RACE ENSEMBLE ',
      'Race Ensemble',
      'rAcE eNsEmBlE',
    ];
    const results = await Promise.all(names.map((name) => create({ name })));
    t.equal(results.filter((r) => r.ok).length, 1, 'one created');
    for (const r of results.filter((r) => !r.ok))
      isError(t, r, 'CONFLICT', 'RIGHTSHOLDER_NAME_TAKEN');
    const { rows } = await db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM rightsholders WHERE organization_id = $1 AND lower(name) = 'race ensemble'`,
      [org],
    );
    t.equal(rows[0]!.n, 1);
  },
);

t.test('a soft-deleted name stays taken, so its restore never meets a namesake', async (t) => {
  const r = await createRightsholder(t, owner, 'Resting Artist');
  ok(t, await update({ id: r.id, name: 'Resting Artist', isDeleted: true }));
  isError(
    t,
    await create({ name: 'resting artist' }),
    'CONFLICT',
    'RIGHTSHOLDER_NAME_TAKEN',
    'create',
  );
  const other = await createRightsholder(t, owner, 'Other Artist');
  isError(
    t,
    await update({ id: other.id, name: 'RESTING ARTIST' }),
    'CONFLICT',
    'RIGHTSHOLDER_NAME_TAKEN',
    'rename',
  );
  t.match(ok(t, await update({ id: r.id, name: 'Resting Artist', isDeleted: false })), {
    id: r.id,
    isDeleted: false,
  });
});

t.test('a batch of 10,000 updates is VALIDATION_FAILED, nothing changed', async (t) => {
  const r = await createRightsholder(t, owner, 'Batch Target');
  isError(
    t,
    await batch(Array.from({ length: 10_000 }, (_, i) => ({ id: r.id, legalName: `L${i}` }))),
    'BAD_REQUEST',
    'VALIDATION_FAILED',
  );
  t.equal(
    ok(t, await owner.client.query('rightsholder.getById', { organizationId: org, id: r.id }))
      .legalName,
    null,
  );
});

t.test('a search typed with a combining accent finds the name stored composed', async (t) => {
  await createRightsholder(t, owner, 'Rene\u0301e Search');
  for (const search of ['Rene\u0301e', 'ren\u00e9e sea', 'RENE\u0301E']) {
    const page = ok(
      t,
      await owner.client.query('rightsholder.list', { organizationId: org, search }),
    );
    t.same(
      page.data.map((r: { name: string }) => r.name),
      ['Ren\u00e9e Search'],
      JSON.stringify(search),
    );
  }
});
