// Empty exports: a rightsholder with no statement yet, in an organization whose analytics database
// has never been built. Every type in every format completes with one file holding the header
// only (no rows), and its listed rowCount says so.
import t from 'tap';
import { seedRightsholder } from '../../analytics/helpers.ts';
import { columnsOf, exportFormats, exportTypes } from '../../../src/exports/definitions.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { downloadAll, readTable, runExport } from './helpers.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Empty Export Org');
const org = owner.organizationId;
const rh = await seedRightsholder(srv, org, 'Nothing Uploaded Yet');

for (const type of exportTypes) {
  t.test(`${type}: one header-only file in every format`, async (t) => {
    for (const format of exportFormats) {
      const done = await runExport(owner.client, org, { type, format, rightsholderIds: [rh] });
      t.match(
        done,
        {
          status: 'completed',
          rowCount: 0,
          fileCount: 1,
          progress: { done: 0, total: 0 },
          errorCode: null,
        },
        format,
      );
      const files = await downloadAll(owner.client, org, done.id);
      t.equal(files.length, 1);
      t.match(files[0]!.file, { part: 1, rowCount: 0 });
      const table = await readTable(format, files[0]!.bytes);
      t.same(
        table.columns,
        columnsOf(type).map((c) => c.name),
        `${format}: the header`,
      );
      t.same(table.rows, [], `${format}: no row`);
    }
  });
}
