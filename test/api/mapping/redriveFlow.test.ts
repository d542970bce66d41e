// The whole mapping flow against the real pipeline: a statement no mapping matches and none can
// be proven for waits in needs_mapping with a suggestion; the suggestion becomes the organization's mapping; the
// redrive preview names the statement; updateById redrives it and it is processed with it.
import t from 'tap';
import { createRightsholder, putFile, waitForStatement } from '../../helpers/ingest.ts';
import { newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { libraryMapping } from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t, { jobs: true });
const owner = await newOrganization(srv);
const org = owner.organizationId;
const artist = await createRightsholder(owner.client, org, 'Flow Artist');

t.test(
  'needs_mapping → suggestion → mapping.create → redrivePreview → updateById redrive → processed',
  async (t) => {
    const headers = [
      'Reporting Month',
      'Shop',
      'Song',
      'ISRC',
      'Territory',
      'Plays',
      'Payout (EUR)',
    ];
    const rows = [
      ['2024-05', 'Spotify', 'Flow Song', 'USRC12400001', 'DE', '1000', '3.50'],
      ['2024-05', 'Deezer', 'Flow Song', 'USRC12400001', 'FR', '100', '0.25'],
    ];
    // the file's own total (3.70) is not its rows' sum (3.75): no mapping can be proven from it,
    // so the service does not draft one on its own and asks
    const total = ['Total', '', '', '', '', '', '3.70'];
    const bytes = Buffer.from([headers, ...rows, total].map((r) => r.join(',')).join('\n') + '\n');
    const { statementId } = await putFile(owner.client, org, artist, 'flow.csv', bytes);
    const waiting = await waitForStatement(owner.client, org, statementId);
    t.equal(waiting.status, 'needs_mapping');
    t.same(
      waiting.suggestedMapping.automatic.reasons.map((r: any) => r.code),
      ['total_mismatch'],
    );
    const suggestion = waiting.suggestedMapping;
    t.same(suggestion.fields.royaltyEarnings, { column: 'Payout (EUR)' });
    t.same(suggestion.fields.currency, { constant: 'EUR' });
    t.same(suggestion.fields.stmtYear, { column: 'Reporting Month' });
    t.same(suggestion.fields.units, { column: 'Plays' });

    const mapping = ok(
      t,
      await owner.client.mutate('mapping.create', {
        organizationId: org,
        name: 'Flow',
        headers: waiting.headers,
        headerHash: waiting.headerHash,
        fields: suggestion.fields,
      }),
    );
    const preview = ok(
      t,
      await owner.client.query('mapping.redrivePreview', {
        organizationId: org,
        mappingId: mapping.id,
      }),
    );
    t.same(
      preview.statements.map((s: any) => [s.id, s.reason]),
      [[statementId, 'needs_mapping']],
    );

    const updated = ok(
      t,
      await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: mapping.id,
        name: 'Flow v2',
        verify: true,
        redriveFileIds: [statementId],
      }),
    );
    t.match(updated, {
      revision: 2,
      redriven: [statementId],
      verification: { statements: 1, problems: [] },
    });
    const done = await waitForStatement(owner.client, org, statementId);
    t.match(done, {
      status: 'processed',
      mappingId: mapping.id,
      mappingRevision: 2,
      currency: 'EUR',
      stmtYear: 2024,
      stmtPeriod: 5,
      stmtCadence: 'M',
    });
    t.equal(Number(done.netEarnings), 3.75);
    t.same(
      ok(
        t,
        await owner.client.query('mapping.redrivePreview', {
          organizationId: org,
          mappingId: mapping.id,
        }),
      ).statements,
      [],
      'nothing left to redrive',
    );
  },
);

t.test(
  'a library layout is processed with the library mapping; an own mapping then takes over',
  async (t) => {
    const lib = await libraryMapping(t, owner, 'distrokid-legacy');
    const rows = [
      [
        '2024-03-15',
        '2024-02',
        'Spotify',
        'Flow Artist',
        'Flow Song',
        'USRC12400001',
        '',
        '1000',
        '100',
        'Song',
        'US',
        '0',
        '3.00012345',
      ],
      [
        '2024-03-15',
        '2024-02',
        'Apple Music',
        'Flow Artist',
        'Flow Song',
        'USRC12400001',
        '',
        '10',
        '100',
        'Song',
        'DE',
        '0',
        '0.10',
      ],
    ];
    const bytes = Buffer.from(
      [lib.headers, ...rows].map((r: string[]) => r.join('\t')).join('\n') + '\n',
    );
    const { statementId } = await putFile(owner.client, org, artist, 'distrokid.tsv', bytes);
    const done = await waitForStatement(owner.client, org, statementId);
    t.match(done, {
      status: 'processed',
      mappingId: lib.id,
      mappingRevision: lib.revision,
      currency: 'USD',
    });

    const own = ok(
      t,
      await owner.client.mutate('mapping.create', {
        organizationId: org,
        name: 'DistroKid in EUR (test)',
        headers: lib.headers,
        headerHash: lib.headerHash,
        fields: { ...lib.fields, currency: { constant: 'EUR' } },
      }),
    );
    const preview = ok(
      t,
      await owner.client.query('mapping.redrivePreview', {
        organizationId: org,
        mappingId: own.id,
      }),
    );
    t.same(
      preview.statements.map((s: any) => [s.id, s.reason, s.changedFields]),
      [[statementId, 'other_mapping', ['currency']]],
    );
    ok(
      t,
      await owner.client.mutate('mapping.updateById', {
        organizationId: org,
        id: own.id,
        redriveFileIds: [statementId],
      }),
    );
    // wait until the redrive has run
    let again: any;
    for (let i = 0; i < 300; i++) {
      again = await waitForStatement(owner.client, org, statementId);
      if (again.mappingId === own.id) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    t.match(again, { status: 'processed', mappingId: own.id, mappingRevision: 1, currency: 'EUR' });
  },
);
