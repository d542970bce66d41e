// File names are data: quotes, line breaks, path parts, SQL and non-Latin letters in fileName,
// customName and the search filters never leave the organization's prefix, never inject a header
// into a download, never match more than their literal text.
import t from 'tap';
import { createRightsholder, putFile } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Names Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Names Artist');

const names: [string, string, string][] = [
  // name, the ASCII filename, the UTF-8 filename*
  [
    'a"b\r\nX-Evil: 1\r\n\r\n<x>.csv',
    'a_b_X-Evil_ 1_x_.csv',
    'a%22b%0D%0AX-Evil%3A%201%0D%0A%0D%0A%3Cx%3E.csv',
  ],
  [
    "Gebühren – 日本 'Q1'.csv",
    'Geb_hren _ _ _Q1_.csv',
    'Geb%C3%BChren%20%E2%80%93%20%E6%97%A5%E6%9C%AC%20%27Q1%27.csv',
  ],
  ['..\\..\\..\\etc\\passwd.csv', '.._.._.._etc_passwd.csv', '..%5C..%5C..%5Cetc%5Cpasswd.csv'],
  [
    "x'; DROP TABLE statements; --.csv",
    'x_ DROP TABLE statements_ --.csv',
    'x%27%3B%20DROP%20TABLE%20statements%3B%20--.csv',
  ],
];

t.test(
  'hostile names: the key stays in the prefix, the download carries one attachment header',
  async (t) => {
    for (const [name, ascii, utf8] of names) {
      const up = await putFile(
        owner.client,
        org,
        artist,
        name,
        Buffer.from('Period,Net\n2024-03,1.00\n'),
        { customName: name },
      );
      const { rows } = await srv.deps.pool.query<{ object_key: string }>(
        'SELECT object_key FROM statements WHERE id = $1',
        [up.statementId],
      );
      t.match(
        rows[0]!.object_key,
        new RegExp(`^orgs/${org}/statements/${up.statementId}/original/[\\w.\\- ]+$`),
        `${JSON.stringify(name)}: a key of our own`,
      );
      const link = await owner.client.mutate('fileStorage.downloadStatementFile', {
        organizationId: org,
        type: 'original',
        file: up.statementId,
      });
      t.equal(link.data.fileName, name);
      const res = await fetch(link.data.url);
      t.equal(res.status, 200);
      t.equal(
        res.headers.get('content-disposition'),
        `attachment; filename="${ascii}"; filename*=UTF-8''${utf8}`,
      );
      t.equal(res.headers.get('x-evil'), null, 'no header injected');
      t.equal(await res.text(), 'Period,Net\n2024-03,1.00\n');
      // found by its literal name only
      const byName = await owner.client.mutate('upload.statements', {
        organizationId: org,
        filter: { fileName: name },
      });
      t.same(
        byName.data.items.map((i: any) => i.id),
        [up.statementId],
      );
      const byCustom = await owner.client.mutate('upload.statements', {
        organizationId: org,
        customName: name,
      });
      t.same(
        byCustom.data.items.map((i: any) => i.id),
        [up.statementId],
      );
      const files = await owner.client.query('file.list', {
        organizationId: org,
        filters: { name, customName: name },
      });
      t.same(
        files.data.data.map((i: any) => i.id),
        [up.statementId],
      );
      const uploads = await owner.client.query('upload.list', {
        organizationId: org,
        filter: { search: name },
      });
      t.same(
        uploads.data.data.map((u: any) => u.id),
        [up.uploadId],
      );
    }
    for (const [search, n] of [
      ["' OR 1=1 --", 0],
      ['%', 0],
      ['_', 0],
      ['\\', 1],
    ] as const) {
      const res = await owner.client.query('upload.list', {
        organizationId: org,
        filter: { search },
      });
      t.equal(res.data.pagination.total, n, `search ${search} matches literally`);
    }
    // a name given for the download is sanitized the same way
    const first = (await owner.client.mutate('upload.statements', { organizationId: org })).data
      .items[0];
    const named = await owner.client.mutate('fileStorage.downloadStatementFile', {
      organizationId: org,
      type: 'original',
      file: first.id,
      fileName: 'r"\r\nSet-Cookie: a=b',
    });
    const res = await fetch(named.data.url);
    t.equal(res.headers.get('set-cookie'), null);
    t.equal(
      res.headers.get('content-disposition'),
      `attachment; filename="r_Set-Cookie_ a_b"; filename*=UTF-8''r%22%0D%0ASet-Cookie%3A%20a%3Db`,
    );
  },
);
