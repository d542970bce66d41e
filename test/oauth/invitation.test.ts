// An invitation link opened in a browser leads the invitee to set a password and join; a person who
// has a password confirms it instead; then they sign in with OAuth.
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { Browser, formOf, tokensFor } from './browser.ts';

const srv = await startTestServer(t);
const owner = await newOrganization(srv, 'Inviting Org');

async function invite(email: string, role = 'writer'): Promise<string> {
  const res = await owner.client.mutate('organization.addUser', {
    organizationId: owner.organizationId,
    email,
    role,
  });
  t.equal(res.ok, true, JSON.stringify(res.error));
  // the link names the configured port (0 in tests): its path on the running server
  const link = new URL(res.data.link as string);
  return `${link.pathname}${link.search}`;
}

t.test('a new person sets a password on the invitation page, joins, then signs in', async (t) => {
  const link = await invite('new.person@example.test');
  const browser = new Browser(srv.url);
  const page = await browser.go(link);
  t.equal(page.status, 200);
  t.match(page.html, /You are invited to <strong>Inviting Org<\/strong> as writer/);
  t.match(page.html, /autocomplete="new-password"/);
  t.equal(page.headers.get('x-frame-options'), 'DENY');
  const form = formOf(page.html, '/invitation');
  const short = await browser.go(form.action, {
    form: { ...form.fields, password: 'short', confirm: 'short' },
  });
  t.match(short.html, /at least 10 characters/);
  const differ = await browser.go(form.action, {
    form: { ...form.fields, password: 'a long enough password', confirm: 'another long password' },
  });
  t.match(differ.html, /The two passwords differ/);
  const joined = await browser.go(form.action, {
    form: { ...form.fields, password: 'a long enough password', confirm: 'a long enough password' },
  });
  t.equal(joined.status, 200);
  t.match(joined.html, /You joined Inviting Org/);
  const again = await browser.go(link);
  t.equal(again.status, 404, 'the link is spent');

  const tokens = await tokensFor(srv, 'new.person@example.test', 'a long enough password');
  const me = await srv
    .client({ authorization: `Bearer ${tokens.access_token}` })
    .query('user.currentUser');
  t.same(me.ok && me.data.organizations, [
    { id: owner.organizationId, name: 'Inviting Org', role: 'writer' },
  ]);
});

t.test('a person with a password confirms it to join', async (t) => {
  const other = await newOrganization(srv, 'Elsewhere');
  await setPassword(srv.deps.pool, other.email, 'their own password');
  const link = await invite(other.email, 'member');
  const browser = new Browser(srv.url);
  const page = await browser.go(link);
  t.match(page.html, /Your password/);
  t.notMatch(page.html, /name="confirm"/);
  const form = formOf(page.html, '/invitation');
  const wrong = await browser.go(form.action, {
    form: { ...form.fields, password: 'not their password' },
  });
  t.match(wrong.html, /The password is not right/);
  const ok = await browser.go(form.action, {
    form: { ...form.fields, password: 'their own password' },
  });
  t.match(ok.html, /You joined Inviting Org/);
  const { rows } = await srv.deps.pool.query(
    'SELECT role FROM memberships WHERE organization_id = $1 AND user_id = $2',
    [owner.organizationId, other.userId],
  );
  t.same(rows, [{ role: 'member' }]);
});

t.test('an unknown token is a plain not-found page', async (t) => {
  const page = await new Browser(srv.url).go('/invitations/accept?token=inv_nothing');
  t.equal(page.status, 404);
  t.match(page.html, /not valid any more/);
});
