// upload.uploadFile's optional sha256 is checked when the statement is read: bytes of another hash
// fail it with UPLOAD_CHECKSUM_MISMATCH, before anything read from them (a damaged upload is not
// reported as a badly formed statement).
import { createHash } from 'node:crypto';
import t from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv, 'Checksum Label');
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Checksum Artist');

// a DistroKid report: the library's mapping reads it
const bytes = Buffer.from(
  [
    'Reporting Date\tSale Month\tStore\tArtist\tTitle\tISRC\tUPC\tQuantity\tTeam Percentage\tSong/Album\tCountry of Sale\tSongwriter Royalties Withheld\tEarnings (USD)',
    '2024-09-05\t2024-08\tSpotify\tOrla Finn\tAutumn\t\t\t10\t100\tSong\tUS\t0\t0.10',
    '',
  ].join('\n'),
);
const sha256 = (b: Buffer | string) => createHash('sha256').update(b).digest('hex');

t.test('the announced hash of the bytes, in any letter case: processed', async (t) => {
  const up = await putFile(owner.client, org, artist, 'september.tsv', bytes, {
    sha256: sha256(bytes).toUpperCase(),
  });
  const s = await waitForStatement(owner.client, org, up.statementId);
  t.equal(s.status, 'processed');
  t.equal(s.sha256, sha256(bytes));
});

t.test('another hash: failed with UPLOAD_CHECKSUM_MISMATCH, nothing read', async (t) => {
  const announced = sha256('other bytes');
  for (const [name, body] of [
    ['september-b.tsv', bytes],
    ['garbage.tsv', Buffer.from([0, 1, 2, 3])],
  ] as const) {
    const up = await putFile(owner.client, org, artist, name, body, { sha256: announced });
    const s = await waitForStatement(owner.client, org, up.statementId);
    t.equal(s.status, 'failed', name);
    t.same(
      s.failureReason,
      {
        errorCode: 'UPLOAD_CHECKSUM_MISMATCH',
        message: `The uploaded file's SHA-256 is ${sha256(body)}; ${announced} was announced`,
      },
      name,
    );
    t.equal(s.rowCount, null, `${name}: nothing read`);
  }
});
