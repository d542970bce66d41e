// musicEnrichment.query: candidates from the configured provider (the offline dataset here; a
// MusicBrainz server that fails, for the error), admin only, validated input.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Enrichment Org');
const org = owner.organizationId;

t.test('candidates by ISRC and by title and artist, best first', async (t) => {
  const byIsrc = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    isrc: 'ES-A1B-11-00343',
  });
  t.ok(byIsrc.ok, JSON.stringify(byIsrc.error));
  t.equal(byIsrc.data.provider, 'offline');
  t.match(byIsrc.data.candidates[0], {
    provider: 'offline',
    providerId: '87131117-84ba-5d8f-b753-103292177d54',
    title: 'Blue Hearts',
    artist: 'Orla Finn',
    isrc: 'ESA1B1100343',
    releaseTitle: 'Burning Horizon',
    releaseDate: '2011-01-29',
  });
  const byTitle = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    title: 'blue hearts',
    artist: 'orla finn',
    limit: 3,
  });
  t.ok(byTitle.data.candidates.length >= 1 && byTitle.data.candidates.length <= 3);
  t.equal(byTitle.data.candidates[0].providerId, '87131117-84ba-5d8f-b753-103292177d54');
  const confidences = byTitle.data.candidates.map((c: { confidence: number }) => c.confidence);
  t.same(
    confidences,
    [...confidences].sort((a, b) => b - a),
    'best first',
  );
  const none = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    title: 'zzzz qqqq xxxx',
  });
  t.same(none.data, { provider: 'offline', candidates: [] });
});

t.test('validation and roles', async (t) => {
  const empty = await owner.client.query('musicEnrichment.query', { organizationId: org });
  t.match(empty.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  const limit = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    title: 'x',
    limit: 51,
  });
  t.match(limit.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  const long = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    title: 'x'.repeat(501),
  });
  t.match(long.error?.data, { code: 'BAD_REQUEST', errorCode: 'VALIDATION_FAILED' });
  const sql = await owner.client.query('musicEnrichment.query', {
    organizationId: org,
    title: "'; DROP TABLE musical_details; --",
  });
  t.same(sql.data?.candidates, []);
  const writer = await addMember(srv, org, 'writer');
  const denied = await writer.client.query('musicEnrichment.query', {
    organizationId: org,
    title: 'Blue Hearts',
  });
  t.match(denied.error?.data, { code: 'FORBIDDEN', errorCode: 'INSUFFICIENT_ROLE' });
  const other = await newOrganization(srv, 'Other');
  const foreign = await owner.client.query('musicEnrichment.query', {
    organizationId: other.organizationId,
    title: 'Blue Hearts',
  });
  t.match(foreign.error?.data, { code: 'BAD_REQUEST', errorCode: 'ORGANIZATION_MISMATCH' });
});

t.test('a failing provider is ENRICHMENT_PROVIDER_FAILED, not a 500', async (t) => {
  const mb = createServer((_req, res) => {
    res.writeHead(503, { 'content-type': 'application/json', 'retry-after': '1' });
    res.end('{"error":"The server is busy"}');
  });
  await new Promise<void>((r) => mb.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => mb.close(() => r())));
  const port = (mb.address() as AddressInfo).port;
  const mbSrv = await startTestHandler(t, {
    env: {
      ENRICHMENT_PROVIDER: 'musicbrainz',
      MUSICBRAINZ_URL: `http://127.0.0.1:${port}`,
      MUSICBRAINZ_CONTACT: 'test@example.test',
      MUSICBRAINZ_MIN_INTERVAL_MS: '0',
      ENRICHMENT_TIMEOUT_MS: '2000',
    },
  });
  const o = await newOrganization(mbSrv, 'MB Org');
  const res = await o.client.query('musicEnrichment.query', {
    organizationId: o.organizationId,
    title: 'Blue Hearts',
  });
  t.match(res.error?.data, {
    code: 'INTERNAL_SERVER_ERROR',
    errorCode: 'ENRICHMENT_PROVIDER_FAILED',
    httpStatus: 500,
  });
});
