// activity.trackVisit: per-member visits, which are not activity events.
import type { ErrorCode } from '../../../src/errors.ts';
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { createLens, createRightsholder, UNKNOWN_ID } from '../rightsholder/helpers.ts';
import { insertMapping } from '../../helpers/ingest.ts';
import type { Caller } from '../../helpers/principals.ts';
import { isError, ok } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv);
const org = owner.organizationId;
const track = (caller: typeof owner, input: Record<string, unknown>) =>
  caller.client.mutateUnchecked('activity.trackVisit', { organizationId: org, ...input });

t.test('counts visits per member and subject, labels kept subjects by their name', async (t) => {
  const r = await createRightsholder(t, owner, 'Visited');
  const reader = await addMember(srv, org, 'reader');
  const first = ok(
    t,
    await track(reader, {
      subjectType: 'rightsholder',
      subjectId: r.id,
      subjectLabel: 'whatever the client says',
    }),
  );
  t.match(first, {
    subjectType: 'rightsholder',
    subjectId: r.id,
    subjectLabel: 'Visited',
    visitCount: 1,
  });
  const second = ok(t, await track(reader, { subjectType: 'rightsholder', subjectId: r.id }));
  t.equal(second.visitCount, 2);
  t.equal(second.firstVisitedAt, first.firstVisitedAt);
  t.ok(second.lastVisitedAt > first.lastVisitedAt);
  t.equal(
    ok(t, await track(owner, { subjectType: 'rightsholder', subjectId: r.id })).visitCount,
    1,
    "the owner's count is separate",
  );

  const lens = await createLens(t, owner, { name: 'Visited Lens' });
  t.match(ok(t, await track(reader, { subjectType: 'lens', subjectId: lens.id })), {
    subjectLabel: 'Visited Lens',
    visitCount: 1,
  });
  const again = ok(t, await track(reader, { subjectType: 'lens', subjectId: lens.id }));
  t.equal(
    ok(t, await reader.client.query('lens.get', { organizationId: org, id: lens.id })).lastOpenedAt,
    again.lastVisitedAt,
    'a visit is an open',
  );

  // types the service does not check are recorded as given
  t.match(
    ok(
      t,
      await track(reader, {
        subjectType: 'chat',
        subjectId: 'chat-7',
        subjectLabel: 'March questions',
      }),
    ),
    {
      subjectType: 'chat',
      subjectId: 'chat-7',
      subjectLabel: 'March questions',
      visitCount: 1,
    },
  );
  const feed = ok(t, await owner.client.query('activity.feed', { organizationId: org }));
  t.same(
    feed.data.map((e: any) => e.action),
    ['lens.create', 'rightsholder.create'],
    'visits are not activity events',
  );
});

t.test('unknown, foreign, hidden subjects are NOT_FOUND and record nothing', async (t) => {
  const other = await newOrganization(srv, 'Other');
  const theirs = await createRightsholder(t, other, 'Theirs');
  const theirLens = await createLens(t, other, { name: 'Their Lens' });
  const writer = await addMember(srv, org, 'writer');
  const secret = await createLens(t, writer, { name: 'Secret', scope: 'personal' });
  const cases: [string, Record<string, unknown>, ErrorCode][] = [
    [
      'unknown rightsholder',
      { subjectType: 'rightsholder', subjectId: UNKNOWN_ID },
      'RIGHTSHOLDER_NOT_FOUND',
    ],
    [
      'rightsholder id not a uuid',
      { subjectType: 'rightsholder', subjectId: "1' OR '1'='1" },
      'RIGHTSHOLDER_NOT_FOUND',
    ],
    [
      'rightsholder of another organization',
      { subjectType: 'rightsholder', subjectId: theirs.id },
      'RIGHTSHOLDER_NOT_FOUND',
    ],
    [
      'lens of another organization',
      { subjectType: 'lens', subjectId: theirLens.id },
      'LENS_NOT_FOUND',
    ],
    [
      "another member's personal lens",
      { subjectType: 'lens', subjectId: secret.id },
      'LENS_NOT_FOUND',
    ],
  ];
  for (const [label, input, errorCode] of cases) {
    const res = await track(owner, input);
    isError(t, res, 'NOT_FOUND', errorCode, label);
    t.notMatch(JSON.stringify(res), /Theirs|Their Lens|Secret/);
  }
  const { rows } = await srv.deps.pool.query(
    'SELECT 1 FROM subject_visits WHERE subject_id = ANY($1)',
    [[theirs.id, theirLens.id, secret.id]],
  );
  t.equal(rows.length, 0);
});

t.test('invalid input is BAD_REQUEST', async (t) => {
  const cases: [string, Record<string, unknown>][] = [
    ['no subjectType', { subjectId: 'x' }],
    ['unknown subjectType', { subjectType: 'planet', subjectId: 'x' }],
    ['no subjectId', { subjectType: 'upload' }],
    ['empty subjectId', { subjectType: 'upload', subjectId: '' }],
    ['long subjectId', { subjectType: 'upload', subjectId: 'x'.repeat(201) }],
    ['long label', { subjectType: 'upload', subjectId: 'x', subjectLabel: 'l'.repeat(501) }],
    ['NUL in label', { subjectType: 'upload', subjectId: 'x', subjectLabel: 'a\u0000' }],
    ['object subjectId', { subjectType: 'upload', subjectId: { $gt: '' } }],
  ];
  for (const [label, input] of cases)
    isError(t, await track(owner, input), 'BAD_REQUEST', 'VALIDATION_FAILED', label);
});

t.test(
  'files, uploads and exports: only those of the organization the caller may see, ids in any case',
  async (t) => {
    const other = await newOrganization(srv, 'Other Tenant');
    const made = async (caller: Caller, name: string) => {
      const rightsholder = await createRightsholder(t, caller, name);
      const upload = ok(
        t,
        await caller.client.mutate('upload.uploadFile', {
          organizationId: caller.organizationId,
          rightsholderId: rightsholder.id,
          fileName: `${name}.csv`,
        }),
      );
      const exported = ok(
        t,
        await caller.client.mutate('export.trigger', {
          organizationId: caller.organizationId,
          type: 'statements',
          format: 'csv',
          rightsholderIds: [rightsholder.id],
        }),
      );
      return {
        rightsholder: rightsholder.id,
        file: upload.statementId as string,
        upload: upload.uploadId as string,
        export: exported.exportId as string,
      };
    };
    const ours = await made(owner, 'Ours Visited');
    const hidden = await made(owner, 'Hidden From Them');
    const theirs = await made(other, 'Theirs Secret');
    const member = await addMember(srv, org, 'member');
    const limited = await addMember(srv, org, 'member');
    ok(
      t,
      await owner.client.mutate('user.setDataAccessRole', {
        organizationId: org,
        userId: limited.userId,
        role: { mode: 'restricted', rightsholderIds: [ours.rightsholder] },
      }),
    );

    t.match(
      ok(
        t,
        await track(member, {
          subjectType: 'file',
          subjectId: ours.file.toUpperCase(),
          subjectLabel: 'ignored',
        }),
      ),
      {
        subjectType: 'file',
        subjectId: ours.file,
        subjectLabel: 'Ours Visited.csv',
        visitCount: 1,
      },
    );
    t.equal(
      ok(t, await track(member, { subjectType: 'file', subjectId: ours.file })).visitCount,
      2,
      'an id in capitals names the same file',
    );
    t.match(
      ok(
        t,
        await track(member, {
          subjectType: 'upload',
          subjectId: ours.upload.toUpperCase(),
          subjectLabel: 'March',
        }),
      ),
      { subjectId: ours.upload, subjectLabel: 'March', visitCount: 1 },
    );
    t.match(ok(t, await track(member, { subjectType: 'export', subjectId: ours.export })), {
      subjectId: ours.export,
      subjectLabel: null,
      visitCount: 1,
    });
    for (const kind of ['file', 'upload', 'export'] as const)
      ok(
        t,
        await track(limited, { subjectType: kind, subjectId: ours[kind] }),
        `restricted: own ${kind}`,
      );

    const codes = {
      file: 'STATEMENT_NOT_FOUND',
      upload: 'UPLOAD_NOT_FOUND',
      export: 'EXPORT_NOT_FOUND',
    } as const;
    for (const kind of ['file', 'upload', 'export'] as const) {
      for (const [label, caller, subjectId] of [
        ["another tenant's", member, theirs[kind]],
        ["another tenant's, in capitals", member, theirs[kind].toUpperCase()],
        ['unknown', member, UNKNOWN_ID],
        ['not a uuid', member, "1' OR '1'='1"],
        ['outside the data access of a restricted member', limited, hidden[kind]],
      ] as const) {
        const res = await track(caller, { subjectType: kind, subjectId, subjectLabel: 'x' });
        isError(t, res, 'NOT_FOUND', codes[kind], `${kind}: ${label}`);
        t.notMatch(JSON.stringify(res), /Theirs Secret|Hidden From Them/);
      }
    }
    const { rows } = await srv.deps.pool.query(
      'SELECT count(*)::int AS n FROM subject_visits WHERE lower(subject_id) = ANY ($1)',
      [
        [
          ...Object.values(theirs),
          ...Object.values(hidden).filter((id) => id !== hidden.rightsholder),
          UNKNOWN_ID,
        ],
      ],
    );
    t.equal(rows[0].n, 0, 'nothing recorded for them');
  },
);

t.test('mappings, the organization and members: only those the caller may see', async (t) => {
  const other = await newOrganization(srv, 'Elsewhere');
  const {
    rows: [library],
  } = await srv.deps.pool.query<{ id: string; name: string }>(
    'SELECT id, name FROM mappings WHERE organization_id IS NULL ORDER BY id LIMIT 1',
  );
  const foreignMapping = {
    id: await insertMapping(srv.deps.pool, other.organizationId, 'Theirs', ['Title', 'Net'], {}),
  };
  const member = await addMember(srv, org, 'member');
  t.match(
    ok(t, await track(member, { subjectType: 'mapping', subjectId: library!.id.toUpperCase() })),
    { subjectId: library!.id, subjectLabel: library!.name },
  );
  t.match(
    ok(t, await track(member, { subjectType: 'organization', subjectId: org.toUpperCase() })),
    { subjectId: org, subjectLabel: 'Test Org' },
  );
  t.match(ok(t, await track(member, { subjectType: 'user', subjectId: owner.userId })), {
    subjectId: owner.userId,
    subjectLabel: owner.email,
  });
  for (const [type, subjectId, errorCode] of [
    ['mapping', foreignMapping.id, 'MAPPING_NOT_FOUND'],
    ['mapping', 'not-a-uuid', 'MAPPING_NOT_FOUND'],
    ['organization', other.organizationId, 'ORGANIZATION_NOT_FOUND'],
    ['organization', UNKNOWN_ID, 'ORGANIZATION_NOT_FOUND'],
    ['user', other.userId, 'USER_NOT_FOUND'],
    ['user', UNKNOWN_ID, 'USER_NOT_FOUND'],
  ] as const) {
    const res = await track(member, { subjectType: type, subjectId, subjectLabel: 'x' });
    isError(t, res, 'NOT_FOUND', errorCode, `${type} ${subjectId}`);
    t.notMatch(JSON.stringify(res), /Theirs|Elsewhere/);
  }
  const { rows } = await srv.deps.pool.query(
    'SELECT count(*)::int AS n FROM subject_visits WHERE subject_id = ANY ($1)',
    [[foreignMapping.id, other.organizationId, other.userId, UNKNOWN_ID]],
  );
  t.equal(rows[0].n, 0);
});
