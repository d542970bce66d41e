// How a statement's file was read, on its record at the handler (`layout`): format, sheet(s),
// header line, the key/value lines above the header, and the file's own totals and balance
// lines, which the rows are never compared with but a user reconciles a statement by.
import t from 'tap';
import { zipFiles } from '../../../fixtures/statements/kit.ts';
import {
  createRightsholder,
  insertMapping,
  putFile,
  waitForStatement,
} from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Layout Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Layout Artist');
const header = ['Period', 'Title', 'Units', 'Earnings'];
const fields = {
  stmtYear: { column: 'Period' },
  stmtPeriod: { column: 'Period' },
  stmtCadence: { constant: 'M' },
  currency: { constant: 'USD' },
  royaltyEarnings: { column: 'Earnings' },
  units: { column: 'Units' },
  rawTitle: { column: 'Title' },
};
await insertMapping(srv.deps.pool, org, 'Layout', header, fields);

t.test('preamble values, the total and the balance lines of a statement, as written', async (t) => {
  const lines = [
    'Payee,=HYPERLINK("x")',
    'Account #,0042',
    '',
    header.join(','),
    '2024-03,A,2,1.50',
    '2024-03,B,4,"2,600.25"',
    'Total,,6,"2,601.75"',
    'Balance Brought Forward,,,(12.50)',
    'Amount Payable,,,"2,589.25"',
  ];
  const { statementId } = await putFile(
    owner.client,
    org,
    artist,
    'royalties.csv',
    Buffer.from(`${lines.join('\n')}\n`),
  );
  const s = await waitForStatement(owner.client, org, statementId);
  t.equal(s.status, 'processed');
  t.equal(s.netEarnings, '2601.750000000000');
  t.same(s.layout, {
    format: 'delimited',
    container: 'none',
    encoding: 'utf-8',
    delimiter: ',',
    sheet: null,
    sheets: [],
    archiveEntry: null,
    archiveEntries: [],
    headerLine: 3,
    footerRecords: 3,
    // a value is data, never evaluated or altered
    preambleValues: { Payee: '=HYPERLINK("x")', 'Account #': '0042' },
    statedTotals: [
      { label: 'Total', values: { Units: '6', Earnings: '2,601.75' }, kind: 'total' },
      {
        label: 'Balance Brought Forward',
        values: { Earnings: '(12.50)' },
        kind: 'balance',
        value: '(12.50)',
      },
      {
        label: 'Amount Payable',
        values: { Earnings: '2,589.25' },
        kind: 'balance',
        value: '2,589.25',
      },
    ],
  });
  t.same(
    s.flags.map((f: { kind: string }) => f.kind),
    [],
    'the total agrees; balance lines are not compared',
  );
  // the same record through file.list
  const listed = await owner.client.queryUnchecked('file.list', {
    organizationId: org,
    search: 'royalties',
  });
  t.same(
    listed.ok && listed.data.data.map((x: { id: string; layout: unknown }) => [x.id, x.layout]),
    [[statementId, s.layout]],
  );
});

t.test(
  'an archive of month files read as one table: its files, their totals as one, its flag',
  async (t) => {
    const monthFile = (m: string, rows: [string, number, string][], total: [number, string]) =>
      Buffer.from(
        [
          `Statement 2024-${m}`,
          header.join(','),
          ...rows.map(([title, units, net]) => `2024-${m},${title},${units},${net}`),
          `Total,,${total[0]},${total[1]}`,
          '',
        ].join('\n'),
      );
    const zip = zipFiles([
      { name: 'read-me.txt', data: Buffer.from('Monthly statements\n') },
      {
        name: 'jan.csv',
        data: monthFile(
          '01',
          [
            ['A', 2, '1.25'],
            ['B', 3, '2.50'],
          ],
          [5, '3.75'],
        ),
      },
      { name: 'feb.csv', data: monthFile('02', [['C', 1, '0.10']], [1, '0.10']) },
    ]);
    const { statementId } = await putFile(owner.client, org, artist, 'q1.zip', zip);
    const s = await waitForStatement(owner.client, org, statementId);
    t.equal(s.status, 'processed');
    t.equal(s.netEarnings, '3.850000000000');
    t.equal(s.keptRows, 3);
    t.match(s.layout, {
      format: 'delimited',
      container: 'zip',
      encoding: 'utf-8',
      archiveEntry: 'jan.csv',
      archiveEntries: ['jan.csv', 'feb.csv'],
      headerLine: 1,
      footerRecords: 2,
    });
    t.same(s.layout.statedTotals, [
      {
        label: 'Total',
        values: { Units: '6.000000000000', Earnings: '3.850000000000' },
        kind: 'total',
      },
    ]);
    t.same(
      s.flags.map((f: { kind: string }) => f.kind).sort(),
      ['files_combined', 'several_statement_periods'],
      'the totals agree with the rows',
    );
  },
);

t.test('a statement not read yet has no layout', async (t) => {
  const started = await owner.client.mutate('upload.uploadFile', {
    organizationId: org,
    rightsholderId: artist,
    fileName: 'later.csv',
  });
  t.equal(started.ok, true);
  const listed = await owner.client.mutate('upload.statements', {
    organizationId: org,
    filter: { statementIds: [started.data.statementId] },
  });
  t.match(listed.data.items, [{ status: 'uploading', layout: null }]);
});
