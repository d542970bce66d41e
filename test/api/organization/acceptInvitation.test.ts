// POST /invitations/accept: the user whose e-mail address the invitation names, authenticated by
// any API key of theirs, joins with the invited role; the token is single-use.
import t from 'tap';
import { addMember, newOrganization } from '../../helpers/principals.ts';
import { queuedBehindOrganization } from '../../helpers/locks.ts';
import { startTestServer } from '../../helpers/server.ts';
import {
  acceptInvitation as accept,
  activities,
  expireInvitation,
  SQL_INJECTION,
  tokenOf,
} from './helpers.ts';
import { ok } from '../../helpers/outcome.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Acme');
const org = owner.organizationId;
const invite = async (
  email: string,
  role = 'member',
  client = owner.client,
  organizationId = org,
) =>
  (
    (await client.mutate('organization.addUser', { organizationId, email, role })) as {
      ok: true;
      data: { id: string; link: string };
    }
  ).data;

t.test('the invitee joins with the invited role; e-mail compared case-insensitively', async (t) => {
  const invitee = await newOrganization(srv, 'Invitee home');
  const inv = await invite(invitee.email.toUpperCase(), 'writer');
  const res = await accept(srv, invitee.apiKey, { token: tokenOf(inv.link) });
  t.equal(res.status, 200);
  t.same(res.body, {
    invitationId: inv.id,
    organizationId: org,
    organizationName: 'Acme',
    userId: invitee.userId,
    role: 'writer',
  });

  const { rows } = await srv.deps.pool.query(
    'SELECT role, status FROM memberships WHERE organization_id = $1 AND user_id = $2',
    [org, invitee.userId],
  );
  t.same(rows, [{ role: 'writer', status: 'active' }]);
  const listed = ok(
    t,
    await owner.client.query('organization.listInvitations', {
      organizationId: org,
      status: ['accepted'],
    }),
  );
  t.match(listed.data, [{ id: inv.id, status: 'accepted', acceptedByUserId: invitee.userId }]);
  const events = await activities(srv, org, 'invitation.accept');
  t.equal(events.length, 1);
  t.match(events[0], {
    subjectType: 'user',
    subjectId: invitee.userId,
    actorUserId: invitee.userId,
    changes: {
      role: { before: null, after: 'writer' },
      invitationId: { before: null, after: inv.id },
    },
  });

  const again = await accept(srv, invitee.apiKey, { token: tokenOf(inv.link) });
  t.equal(again.status, 409, 'single use');
  t.same(again.body.error, {
    message: 'The invitation is accepted',
    code: 'CONFLICT',
    errorCode: 'INVITATION_NOT_PENDING',
    details: { status: 'accepted' },
  });
});

t.test('the token may come in the query string: the link itself is POSTed', async (t) => {
  const invitee = await newOrganization(srv, 'Second home');
  const inv = await invite(invitee.email);
  const res = await accept(srv, invitee.apiKey, undefined, { query: new URL(inv.link).search });
  t.same([res.status, res.body.role], [200, 'member']);
});

t.test('someone else holding the link: FORBIDDEN, the invitation stays pending', async (t) => {
  const invitee = await newOrganization(srv, 'Right');
  const intruder = await newOrganization(srv, 'Wrong');
  const inv = await invite(invitee.email);
  const res = await accept(srv, intruder.apiKey, { token: tokenOf(inv.link) });
  t.same(
    [res.status, res.body.error.code, res.body.error.errorCode],
    [403, 'FORBIDDEN', 'INVITATION_EMAIL_MISMATCH'],
  );
  const pending = ok(
    t,
    await owner.client.query('organization.listInvitations', { organizationId: org }),
  );
  t.ok(pending.data.some((i: { id: string }) => i.id === inv.id));
  t.equal((await accept(srv, invitee.apiKey, { token: tokenOf(inv.link) })).status, 200);
});

t.test('expired, revoked, unknown', async (t) => {
  const invitee = await newOrganization(srv, 'Late');
  const inv = await invite(invitee.email);
  await expireInvitation(srv, inv.id);
  const expired = await accept(srv, invitee.apiKey, { token: tokenOf(inv.link) });
  t.same(
    [expired.status, expired.body.error.errorCode, expired.body.error.details],
    [409, 'INVITATION_NOT_PENDING', { status: 'expired' }],
  );
  for (const token of ['inv_unknown', SQL_INJECTION]) {
    const res = await accept(srv, invitee.apiKey, { token });
    t.same(
      [res.status, res.body.error.code, res.body.error.errorCode],
      [404, 'NOT_FOUND', 'INVITATION_NOT_FOUND'],
    );
  }
});

t.test('already a member: CONFLICT', async (t) => {
  const writer = await addMember(srv, org, 'writer');
  await srv.deps.pool.query('DELETE FROM memberships WHERE organization_id = $1 AND user_id = $2', [
    org,
    writer.userId,
  ]);
  const inv = await invite(writer.email);
  await srv.deps.pool.query(
    `INSERT INTO memberships (organization_id, user_id, role) VALUES ($1, $2, 'member')`,
    [org, writer.userId],
  );
  const res = await accept(srv, writer.apiKey, { token: tokenOf(inv.link) });
  t.same([res.status, res.body.error.errorCode], [409, 'USER_ALREADY_MEMBER']);
});

t.test('a deleted organization: NOT_FOUND', async (t) => {
  const doomed = await newOrganization(srv, 'Doomed');
  const invitee = await newOrganization(srv, 'Hopeful');
  const inv = await invite(invitee.email, 'member', doomed.client, doomed.organizationId);
  ok(
    t,
    await doomed.client.mutate('organization.delete', { organizationId: doomed.organizationId }),
  );
  const res = await accept(srv, invitee.apiKey, { token: tokenOf(inv.link) });
  t.same([res.status, res.body.error.errorCode], [404, 'ORGANIZATION_NOT_FOUND']);
});

t.test('two accepts at once: exactly one succeeds', async (t) => {
  const invitee = await newOrganization(srv, 'Racer');
  const inv = await invite(invitee.email);
  const results = await Promise.all(
    [1, 2, 3].map(() => accept(srv, invitee.apiKey, { token: tokenOf(inv.link) })),
  );
  t.same(results.map((r) => r.status).sort(), [200, 409, 409]);
});

t.test('authentication', async (t) => {
  const inv = await invite('nobody@example.test');
  const body = { token: tokenOf(inv.link) };
  const none = await accept(srv, undefined, body);
  t.same([none.status, none.body.error.errorCode], [401, 'AUTH_REQUIRED']);
  const bad = await accept(srv, 'rk_not-a-key', body);
  t.same([bad.status, bad.body.error.errorCode], [401, 'INVALID_API_KEY']);
  const bearer = await accept(srv, undefined, body, { headers: { authorization: 'Bearer abc' } });
  t.same([bearer.status, bearer.body.error.errorCode], [401, 'INVALID_ACCESS_TOKEN']);
});

t.test('malformed requests: BAD_REQUEST, never a 500', async (t) => {
  const invitee = await newOrganization(srv, 'Caller');
  for (const body of [
    {},
    { token: '' },
    { token: 42 },
    { token: 'x'.repeat(201) },
    { token: ['a'] },
    [1, 2],
    'null',
  ]) {
    const res = await accept(srv, invitee.apiKey, body);
    t.same(
      [res.status, res.body.error.errorCode],
      [400, 'VALIDATION_FAILED'],
      JSON.stringify(body).slice(0, 40),
    );
  }
  const noToken = await accept(srv, invitee.apiKey, undefined);
  t.same([noToken.status, noToken.body.error.errorCode], [400, 'VALIDATION_FAILED']);
  const badJson = await accept(srv, invitee.apiKey, '{"token": ');
  t.same([badJson.status, badJson.body.error.errorCode], [400, 'INVALID_JSON']);
  const poisoned = await accept(srv, invitee.apiKey, '{"__proto__": {"x": 1}, "token": "inv_x"}');
  t.equal(poisoned.status, 400);
  const wrongMethod = await fetch(`${srv.url}/invitations/accept`, {
    method: 'GET',
    headers: { 'x-api-key': invitee.apiKey },
  });
  t.equal(wrongMethod.status, 404);
});

t.test(
  "the API key's procedure patterns: accepting needs * or invitation.* (invitation.accept)",
  async (t) => {
    const { createApiKey } = await import('../../../src/auth/apiKeys.ts');
    const invitee = await newOrganization(srv, 'Narrow keys');
    const keyWith = async (patterns: string[]) =>
      (
        await createApiKey(srv.deps.pool, {
          userId: invitee.userId,
          name: 'narrow',
          organizationIds: [invitee.organizationId],
          patterns,
        })
      ).key;
    const inv = await invite(invitee.email, 'admin');
    for (const patterns of [
      ['cube.*'],
      ['rightsholder.*', 'cube.query'],
      ['organization.addUser'],
    ]) {
      const res = await accept(srv, await keyWith(patterns), { token: tokenOf(inv.link) });
      t.same(
        [res.status, res.body.error?.code, res.body.error?.errorCode],
        [403, 'FORBIDDEN', 'API_KEY_SCOPE_DENIED'],
        patterns.join(','),
      );
    }
    const { rows } = await srv.deps.pool.query(
      'SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2',
      [org, invitee.userId],
    );
    t.equal(rows.length, 0, 'not a member');
    const pending = ok(
      t,
      await owner.client.query('organization.listInvitations', { organizationId: org }),
    );
    t.ok(
      pending.data.some((i: { id: string }) => i.id === inv.id),
      'still pending',
    );
    for (const patterns of [['invitation.accept'], ['cube.*', 'invitation.*']]) {
      const other = await invite((await newOrganization(srv, 'Scoped')).email);
      t.equal(
        (await accept(srv, await keyWith(patterns), { token: tokenOf(other.link) })).body.error
          ?.errorCode,
        'INVITATION_EMAIL_MISMATCH',
        'scope passes, then the address is checked',
      );
    }
    const accepted = await accept(srv, await keyWith(['invitation.accept']), {
      token: tokenOf(inv.link),
    });
    t.same([accepted.status, accepted.body.role], [200, 'admin']);
  },
);

t.test(
  'a link re-issued while its acceptance waited for the organization: INVITATION_NOT_FOUND, never a 500',
  async (t) => {
    const invitee = await newOrganization(srv, 'Raced invitee');
    const inv = await invite(invitee.email);
    const [relinked, accepted] = await queuedBehindOrganization<any>(srv.deps.pool, org, [
      () =>
        owner.client.mutate('organization.getInvitationLink', {
          organizationId: org,
          invitationId: inv.id,
        }),
      () => accept(srv, invitee.apiKey, { token: tokenOf(inv.link) }),
    ]);
    ok(t, relinked, 'the new link is issued first');
    t.equal(accepted.status, 404);
    t.match(accepted.body, { error: { code: 'NOT_FOUND', errorCode: 'INVITATION_NOT_FOUND' } });
    const { rows } = await srv.deps.pool.query(
      'SELECT 1 FROM memberships WHERE organization_id = $1 AND user_id = $2',
      [org, invitee.userId],
    );
    t.equal(rows.length, 0, 'nobody joined');
    const again = await accept(srv, invitee.apiKey, { token: tokenOf(relinked.data.link) });
    t.equal(again.status, 200, 'the new link works');
  },
);
