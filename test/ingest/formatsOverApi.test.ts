// Number formats and text encodings through the real HTTP API (presigned PUT, job runner, worker
// threads, DuckDB): a semicolon statement with decimal commas and one (12.00) fails
// AMOUNT_FORMAT_CONFLICT naming that row; a Shift-JIS statement's titles come out exact; a guessed
// encoding is flagged and an `encoding` named with the upload or a reprocess is read instead.
import iconv from 'iconv-lite';
import t from 'tap';
import { createRightsholder, insertMapping, putFile, waitForStatement } from '../helpers/ingest.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { TITLE_AMOUNT_HEADER, titleAmountFields } from '../helpers/sampleMapping.ts';

const srv = await startTestServer(t, { role: 'serve' });
const owner = await newOrganization(srv, 'Formats Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Formats Artist');

const header = TITLE_AMOUNT_HEADER;
const mappingId = await insertMapping(
  srv.deps.pool,
  org,
  'Titles and amounts',
  header,
  titleAmountFields,
);

const statement = async (id: string) => waitForStatement(owner.client, org, id);
const titles = async (statementId: string) => {
  const res = await owner.client.mutate('mapping.processSample', {
    organizationId: org,
    statementId,
    mappingId,
  });
  if (!res.ok) throw new Error(JSON.stringify(res.error));
  return res.data.rows.map((r: { raw_title: string; royalty_earnings: string }) => [
    r.raw_title,
    r.royalty_earnings,
  ]);
};

t.test(
  'decimal commas and one (12.00): failed with AMOUNT_FORMAT_CONFLICT, the offending row in the details',
  async (t) => {
    const up = await putFile(
      owner.client,
      org,
      artist,
      'march.csv',
      Buffer.from('Title;Amount\r\nEmber;1,50\r\nSlow River;(12.00)\r\nPaper Boats;2,25\r\n'),
    );
    const s = await statement(up.statementId);
    t.equal(s.status, 'failed');
    t.same(s.failureReason, {
      errorCode: 'AMOUNT_FORMAT_CONFLICT',
      message:
        'The numbers of "Amount" (royaltyEarnings) are read with a decimal comma (1.234,56), but 1 row contradicts it (row 2 "(12.00)") and no one rule reads them all: ' +
        "correct those cells, or set the field's format to 'decimal_comma' or 'decimal_point' in the mapping if the other rule is right.",
      details: {
        field: 'royaltyEarnings',
        columns: ['Amount'],
        format: 'decimal_comma',
        count: 1,
        rows: [{ row: 2, value: '(12.00)' }],
      },
    });
    t.equal(s.netEarnings, null, 'nothing was stored');
    // a later failure by a writer that records no details shows none of this one's
    await srv.deps.pool.query(
      `UPDATE statements SET failure_code = 'UPLOAD_ABORTED', failure_reason = 'aborted' WHERE id = $1`,
      [up.statementId],
    );
    t.same((await statement(up.statementId)).failureReason, {
      errorCode: 'UPLOAD_ABORTED',
      message: 'aborted',
    });
    // the same statement corrected: processed, and the failure's details gone with the failure
    const fixed = await putFile(
      owner.client,
      org,
      artist,
      'march-fixed.csv',
      Buffer.from('Title;Amount\r\nEmber;1,50\r\nSlow River;(12,00)\r\nPaper Boats;2,25\r\n'),
    );
    const ok = await statement(fixed.statementId);
    t.same([ok.status, ok.failureReason, ok.netEarnings], ['processed', null, '-8.250000000000']);
  },
);

t.test('a Shift-JIS statement: its titles exact, the encoding recorded, no flag', async (t) => {
  const up = await putFile(
    owner.client,
    org,
    artist,
    'jp.csv',
    iconv.encode(
      'Title;Amount\r\n夜の歌;1,50\r\n千本桜;2,25\r\n残酷な天使のテーゼ;3,00\r\n',
      'shift_jis',
    ),
  );
  const s = await statement(up.statementId);
  t.equal(s.status, 'processed', JSON.stringify(s.failureReason));
  t.equal(s.layout.encoding, 'shift_jis');
  t.same(await titles(up.statementId), [
    ['夜の歌', '1.500000000000'],
    ['千本桜', '2.250000000000'],
    ['残酷な天使のテーゼ', '3.000000000000'],
  ]);
  t.notOk(s.flags.some((f: { kind: string }) => f.kind === 'encoding_uncertain'));
});

t.test(
  'a guessed encoding is flagged; reprocess naming the encoding reads the titles exactly',
  async (t) => {
    // a single kanji: too few bytes to tell Shift-JIS from Big5
    const up = await putFile(
      owner.client,
      org,
      artist,
      'one.csv',
      iconv.encode('Title,Amount\n夜,1.50\n', 'shift_jis'),
    );
    const guessed = await statement(up.statementId);
    t.equal(guessed.status, 'processed');
    const flag = guessed.flags.find((f: { kind: string }) => f.kind === 'encoding_uncertain');
    t.match(flag, { severity: 'warning', details: { encoding: 'big5' } });
    t.ok(flag.details.candidates.includes('shift_jis'), JSON.stringify(flag.details));
    t.not((await titles(up.statementId))[0][0], '夜');

    const again = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId, encoding: 'Shift_JIS' },
    });
    t.equal(again.ok, true, JSON.stringify(again.ok ? null : again.error));
    const read = await statement(up.statementId);
    t.same(
      [read.status, read.encoding, read.layout.encoding],
      ['processed', 'shift_jis', 'shift_jis'],
    );
    t.notOk(
      read.flags.some((f: { kind: string }) => f.kind === 'encoding_uncertain'),
      'the flag goes with the guess',
    );
    t.same(await titles(up.statementId), [['夜', '1.500000000000']]);

    // null detects it again
    const detect = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId, encoding: null },
    });
    t.equal(detect.ok, true);
    const back = await statement(up.statementId);
    t.same([back.encoding, back.layout.encoding], [null, 'big5']);
  },
);

t.test('an encoding named with uploadFile is read instead of any guess', async (t) => {
  const up = await putFile(
    owner.client,
    org,
    artist,
    'kr.csv',
    iconv.encode('Title;Amount\r\n회상;1,50\r\n', 'euc-kr'),
    { encoding: 'EUC-KR' },
  );
  const s = await statement(up.statementId);
  t.same([s.status, s.encoding, s.layout.encoding], ['processed', 'euc-kr', 'euc-kr']);
  t.same(await titles(up.statementId), [['회상', '1.500000000000']]);
});

t.test(
  'an encoding iconv-lite does not decode is ENCODING_UNKNOWN and changes nothing',
  async (t) => {
    const start = await owner.client.mutate('upload.uploadFile', {
      organizationId: org,
      rightsholderId: artist,
      fileName: 'x.csv',
      encoding: 'klingon-8',
    });
    t.same(!start.ok && [start.error.data.code, start.error.data.errorCode], [
      'BAD_REQUEST',
      'ENCODING_UNKNOWN',
    ]);
    const up = await putFile(
      owner.client,
      org,
      artist,
      'y.csv',
      Buffer.from('Title;Amount\r\nEmber;1,50\r\n'),
    );
    await statement(up.statementId);
    const again = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'reprocess', statementId: up.statementId, encoding: 'klingon-8' },
    });
    t.same(!again.ok && [again.error.data.code, again.error.data.errorCode], [
      'BAD_REQUEST',
      'ENCODING_UNKNOWN',
    ]);
    const s = await statement(up.statementId);
    t.same([s.status, s.encoding], ['processed', null]);
    const skip = await owner.client.mutate('upload.uploadAction', {
      organizationId: org,
      action: { type: 'skip', statementId: up.statementId, encoding: 'utf-8' },
    });
    t.same(
      !skip.ok && skip.error.data.errorCode,
      'VALIDATION_FAILED',
      'encoding goes with the actions that read the file',
    );
  },
);
