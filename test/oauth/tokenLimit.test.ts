// The token endpoint is limited per client address (OAUTH_TOKEN_REQUESTS_PER_ADDRESS a minute):
// past it a request is answered 429 too_many_requests with Retry-After before anything is read,
// whatever it carries.
import t from 'tap';
import { startTestServer } from '../helpers/server.ts';

const srv = await startTestServer(t, { env: { OAUTH_TOKEN_REQUESTS_PER_ADDRESS: '3' } });

t.test('the fourth token request of a minute from one address is 429', async (t) => {
  const ask = () =>
    fetch(`${srv.url}/api/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'not-a-token', client_id: 'royalty-cli' }),
    });
  const answers = [];
  for (let i = 0; i < 4; i++) {
    const res = await ask();
    answers.push([res.status, ((await res.json()) as { error: string }).error, res.headers.get('retry-after')]);
  }
  t.same(answers, [
    [400, 'invalid_grant', null],
    [400, 'invalid_grant', null],
    [400, 'invalid_grant', null],
    [429, 'too_many_requests', '60'],
  ]);
});
