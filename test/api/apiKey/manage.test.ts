// Managing other people's API keys: a key acts as its owner, so no one but its owner (or a
// platform operator) may rotate it, and an admin manages no key of someone who outranks them.
import t from 'tap';
import { addMember, newOrganization, outsider } from '../../helpers/principals.ts';
import { startTestHandler } from '../../helpers/handler.ts';
import { isError } from '../../helpers/outcome.ts';

const srv = await startTestHandler(t);
const owner = await newOrganization(srv, 'Keyed Label');
const org = owner.organizationId;
const keyOf = async (userId: string) =>
  (
    await srv.deps.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE user_id = $1', [
      userId,
    ])
  ).rows[0]!.id;

t.test("an admin cannot take over the owner's key, nor a platform operator's", async (t) => {
  const admin = await addMember(srv, org, 'admin');
  const ownerKey = await keyOf(owner.userId);
  for (const change of [{}, { rotate: true }, { rotate: true, name: 'mine now' }]) {
    isError(
      t,
      await admin.client.mutate('apiKey.update', { organizationId: org, id: ownerKey, ...change }),
      'FORBIDDEN',
      'API_KEY_NOT_MANAGEABLE',
    );
  }
  // nor rename, re-scope or delete it: the owner outranks the admin
  isError(
    t,
    await admin.client.mutate('apiKey.update', {
      organizationId: org,
      id: ownerKey,
      rotate: false,
      patterns: ['health'],
    }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  isError(
    t,
    await admin.client.mutate('apiKey.delete', { organizationId: org, id: ownerKey }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  const still = await owner.client.query('user.currentUser');
  t.equal(still.ok && still.data.id, owner.userId, "the owner's key works as before");
  const { rows } = await srv.deps.pool.query(
    'SELECT name, procedure_patterns, rotated_at FROM api_keys WHERE id = $1',
    [ownerKey],
  );
  t.same(
    rows[0],
    { name: rows[0].name, procedure_patterns: ['*'], rotated_at: null },
    'nothing about it changed',
  );
  isError(
    t,
    await admin.client.mutate('organization.delete', { organizationId: org }),
    'FORBIDDEN',
    'INSUFFICIENT_ROLE',
  );

  // a platform operator's key scoped to this organization alone
  const operator = await outsider(srv, org, 'c2_superadmin');
  const operatorKey = await keyOf(operator.userId);
  isError(
    t,
    await admin.client.mutate('apiKey.update', { organizationId: org, id: operatorKey }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  isError(
    t,
    await admin.client.mutate('apiKey.update', {
      organizationId: org,
      id: operatorKey,
      rotate: false,
      name: 'x',
    }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  isError(
    t,
    await admin.client.mutate('apiKey.delete', { organizationId: org, id: operatorKey }),
    'FORBIDDEN',
    'API_KEY_NOT_MANAGEABLE',
  );
  t.equal(
    (await operator.client.query('organization.list', {})).ok,
    true,
    "the operator's key works as before",
  );
});

t.test(
  "an admin renames, re-scopes and deletes a writer's key, but never rotates it",
  async (t) => {
    const admin = await addMember(srv, org, 'admin');
    const writer = await addMember(srv, org, 'writer');
    const writerKey = await keyOf(writer.userId);
    isError(
      t,
      await admin.client.mutate('apiKey.update', { organizationId: org, id: writerKey }),
      'FORBIDDEN',
      'API_KEY_NOT_MANAGEABLE',
    );
    const renamed = await admin.client.mutate('apiKey.update', {
      organizationId: org,
      id: writerKey,
      rotate: false,
      name: 'ingest bot',
      patterns: ['upload.*'],
    });
    t.match(renamed.ok && renamed.data, {
      id: writerKey,
      name: 'ingest bot',
      patterns: ['upload.*'],
      key: null,
      userId: writer.userId,
    });
    isError(t, await writer.client.query('user.currentUser'), 'FORBIDDEN', 'API_KEY_SCOPE_DENIED');
    // another admin's key: same rank, so manageable, still not rotatable
    const peer = await addMember(srv, org, 'admin');
    const peerKey = await keyOf(peer.userId);
    isError(
      t,
      await admin.client.mutate('apiKey.update', {
        organizationId: org,
        id: peerKey,
        rotate: true,
      }),
      'FORBIDDEN',
      'API_KEY_NOT_MANAGEABLE',
    );
    t.same(
      (await admin.client.mutate('apiKey.delete', { organizationId: org, id: writerKey })).data,
      { id: writerKey, deleted: true },
    );
    isError(t, await writer.client.query('user.currentUser'), 'UNAUTHORIZED', 'INVALID_API_KEY');
    // its owner rotates their own key
    const own = await peer.client.mutate('apiKey.update', { organizationId: org, id: peerKey });
    t.match(own.ok && own.data.key, /^rk_/);
  },
);

t.test('a platform operator may rotate any key of the organization', async (t) => {
  const operator = await outsider(srv, org, 'c2_superadmin');
  const writer = await addMember(srv, org, 'writer');
  const res = await operator.client.mutate('apiKey.update', {
    organizationId: org,
    id: await keyOf(writer.userId),
  });
  t.match(res.ok && res.data.key, /^rk_/);
  const asWriter = srv.client({ 'x-api-key': res.data.key, 'x-organization-id': org });
  const me = await asWriter.query('user.currentUser');
  t.equal(me.ok && me.data.id, writer.userId);
});

t.test('a restricted key cannot reach past its own scope through apiKey.update', async (t) => {
  const { createApiKey } = await import('../../../src/auth/apiKeys.ts');
  const admin = await addMember(srv, org, 'admin');
  const other = await newOrganization(srv, 'Elsewhere');
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`,
    [other.organizationId, admin.userId],
  );
  const fullKey = await keyOf(admin.userId);
  const wide = await createApiKey(srv.deps.pool, {
    userId: admin.userId,
    name: 'two orgs',
    organizationIds: [org, other.organizationId],
    patterns: ['rightsholder.*'],
  });
  const narrow = await createApiKey(srv.deps.pool, {
    userId: admin.userId,
    name: 'rotator',
    organizationIds: [org],
    patterns: ['apiKey.*', 'rightsholder.*'],
  });
  const asNarrow = srv.client({ 'x-api-key': narrow.key, 'x-organization-id': org });
  const patternsOf = async (id: string) =>
    (await srv.deps.pool.query('SELECT procedure_patterns AS p FROM api_keys WHERE id = $1', [id]))
      .rows[0].p;

  // widening itself
  isError(
    t,
    await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: narrow.record.id,
      rotate: false,
      patterns: ['*'],
    }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
  isError(
    t,
    await asNarrow.mutate('apiKey.update', {
      organizationId: org,
      id: narrow.record.id,
      rotate: true,
      patterns: ['apiKey.*', 'cube.*'],
    }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
  t.same(await patternsOf(narrow.record.id), ['apiKey.*', 'rightsholder.*'], 'unchanged');
  // taking the secret of a wider key of the same user: every procedure, or another organization
  isError(
    t,
    await asNarrow.mutate('apiKey.update', { organizationId: org, id: fullKey }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
  isError(
    t,
    await asNarrow.mutate('apiKey.update', { organizationId: org, id: wide.record.id }),
    'FORBIDDEN',
    'API_KEY_SCOPE_DENIED',
  );
  t.equal((await admin.client.query('user.currentUser')).ok, true, 'the full key still works');

  // within its scope: narrowing itself, rotating itself, rotating a narrower key of its user
  const self = await asNarrow.mutate('apiKey.update', {
    organizationId: org,
    id: narrow.record.id,
    rotate: true,
    patterns: ['apiKey.update', 'rightsholder.list'],
  });
  t.match(self.ok && self.data, { patterns: ['apiKey.update', 'rightsholder.list'], key: /^rk_/ });
  const asRotated = srv.client({ 'x-api-key': self.data.key, 'x-organization-id': org });
  const lister = await createApiKey(srv.deps.pool, {
    userId: admin.userId,
    name: 'lister',
    organizationIds: [org],
    patterns: ['rightsholder.list'],
  });
  const rotated = await asRotated.mutate('apiKey.update', {
    organizationId: org,
    id: lister.record.id,
  });
  t.match(rotated.ok && rotated.data, { key: /^rk_/, patterns: ['rightsholder.list'] });
  // renaming or narrowing a wider key without taking its secret is fine
  const renamed = await asRotated.mutate('apiKey.update', {
    organizationId: org,
    id: fullKey,
    rotate: false,
    name: 'renamed',
  });
  t.match(renamed.ok && renamed.data, { name: 'renamed', key: null, patterns: ['*'] });
});

t.test(
  'changes of keys are in the activity log (never the secret); a change of nothing records nothing',
  async (t) => {
    const admin = await addMember(srv, org, 'admin');
    const writer = await addMember(srv, org, 'writer');
    const writerKey = await keyOf(writer.userId);
    const events = async () =>
      (
        await srv.deps.pool.query(
          `SELECT action, subject_type, subject_id, subject_label, actor_user_id, changes FROM activity_events
         WHERE organization_id = $1 AND action LIKE 'apiKey.%' AND subject_id = $2 ORDER BY id`,
          [org, writer.userId],
        )
      ).rows;
    const renamed = await admin.client.mutate('apiKey.update', {
      organizationId: org,
      id: writerKey,
      rotate: false,
      name: 'bot',
      patterns: ['upload.*'],
    });
    t.equal(renamed.ok, true);
    t.equal(
      (
        await admin.client.mutate('apiKey.update', {
          organizationId: org,
          id: writerKey,
          rotate: false,
          name: 'bot',
        })
      ).ok,
      true,
    );
    const rotated = await writer.client.mutate('apiKey.update', {
      organizationId: org,
      id: writerKey,
    });
    t.equal(rotated.ok, false, "the writer's key no longer covers apiKey.update");
    const operator = await outsider(srv, org, 'c2_superadmin');
    const byOperator = await operator.client.mutate('apiKey.update', {
      organizationId: org,
      id: writerKey,
    });
    t.match(byOperator.ok && byOperator.data.key, /^rk_/);
    t.same(
      (await admin.client.mutate('apiKey.delete', { organizationId: org, id: writerKey })).data,
      { id: writerKey, deleted: true },
    );

    const log = await events();
    t.same(
      log.map((e) => [e.action, e.subject_type, e.subject_id, e.subject_label, e.actor_user_id]),
      [
        ['apiKey.update', 'user', writer.userId, writer.email, admin.userId],
        ['apiKey.update', 'user', writer.userId, writer.email, operator.userId],
        ['apiKey.delete', 'user', writer.userId, writer.email, admin.userId],
      ],
    );
    t.match(log[0].changes, {
      apiKey: {
        before: { id: writerKey, name: 'test', patterns: ['*'], rotatedAt: null },
        after: { id: writerKey, name: 'bot', patterns: ['upload.*'], rotatedAt: null },
      },
    });
    t.not(
      log[1].changes.apiKey.before.prefix,
      log[1].changes.apiKey.after.prefix,
      'rotation shows as a new prefix',
    );
    t.type(log[1].changes.apiKey.after.rotatedAt, 'string');
    t.same(log[2].changes.apiKey.after, null);
    t.notOk(JSON.stringify(log).includes(byOperator.data.key), 'the secret is nowhere in the log');
  },
);

t.test(
  "events about a key spanning several organizations name only the reader's organization",
  async (t) => {
    const { createApiKey } = await import('../../../src/auth/apiKeys.ts');
    const both = await addMember(srv, org, 'admin');
    const elsewhere = await newOrganization(srv, 'Hidden Partner');
    const hidden = elsewhere.organizationId;
    await srv.deps.pool.query(
      `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'admin')`,
      [hidden, both.userId],
    );
    const wide = await createApiKey(srv.deps.pool, {
      userId: both.userId,
      name: 'two orgs',
      organizationIds: [org, hidden],
      patterns: ['*'],
    });
    const renamed = await both.client.mutate('apiKey.update', {
      organizationId: org,
      id: wide.record.id,
      rotate: false,
      name: 'renamed',
    });
    t.same(
      renamed.ok && renamed.data.organizationIds,
      [org, hidden],
      "its owner sees the key's whole scope",
    );
    // a row recorded before events were written so: the read path leaves the other id out as well
    await srv.deps.pool.query(
      `INSERT INTO activity_events (organization_id, actor_user_id, action, subject_type, subject_id, subject_label, changes)
     VALUES ($1, $2, 'apiKey.delete', 'user', $3, $4, $5)`,
      [
        org,
        both.userId,
        both.userId,
        both.email,
        JSON.stringify({
          apiKey: {
            before: { id: wide.record.id, name: 'old', organizationIds: [hidden, org] },
            after: null,
          },
        }),
      ],
    );
    const { rows } = await srv.deps.pool.query(
      `SELECT changes FROM activity_events WHERE organization_id = $1 AND action = 'apiKey.update' AND subject_id = $2`,
      [org, both.userId],
    );
    t.same(
      rows.map((r) => [
        r.changes.apiKey.before.organizationIds,
        r.changes.apiKey.after.organizationIds,
      ]),
      [[[org], [org]]],
      'stored with this organization only',
    );

    const member = await addMember(srv, org, 'member');
    const feed = await member.client.query('activity.feed', {
      organizationId: org,
      subjectType: 'user',
    });
    const history = await member.client.query('activity.byEntity', {
      organizationId: org,
      subjectType: 'user',
      subjectId: both.userId,
    });
    for (const [label, res] of [
      ['feed', feed],
      ['byEntity', history],
    ] as const) {
      t.equal(res.ok, true, label);
      const events = res.data.data.filter((e: any) => e.subjectId === both.userId);
      t.same(
        events.map((e: any) => [
          e.action,
          e.changes.apiKey.before.organizationIds,
          e.changes.apiKey.after?.organizationIds ?? null,
        ]),
        [
          ['apiKey.delete', [org], null],
          ['apiKey.update', [org], [org]],
        ],
        `${label}: only this organization's id`,
      );
      t.notOk(
        JSON.stringify(res.data).includes(hidden),
        `${label}: the other organization is nowhere`,
      );
    }
  },
);

t.test('a key id in capitals names the same key, answered as stored', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  const id = await keyOf(writer.userId);
  const renamed = await owner.client.mutate('apiKey.update', {
    organizationId: org,
    id: id.toUpperCase(),
    rotate: false,
    name: 'Capitals',
  });
  t.match(renamed.ok && renamed.data, { id, name: 'Capitals' });
  const deleted = await owner.client.mutate('apiKey.delete', {
    organizationId: org,
    id: id.toUpperCase(),
  });
  t.same(deleted.ok && deleted.data, { id, deleted: true });
  isError(
    t,
    await owner.client.mutate('apiKey.delete', { organizationId: org, id: id.toUpperCase() }),
    'NOT_FOUND',
    'API_KEY_NOT_FOUND',
  );
});
