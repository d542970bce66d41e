// An assistant's first connection, as the SDK's own client makes it: the 401 leads it to the
// protected-resource metadata and the authorization server, it registers itself (RFC 7591), the
// person signs in and allows in a browser (PKCE), and the token it gets opens the tool server.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import t from 'tap';
import { setPassword } from '../../src/oauth/passwords.ts';
import { newOrganization } from '../helpers/principals.ts';
import { startTestServer } from '../helpers/server.ts';
import { Browser, CALLBACK, signInAndAllow } from '../oauth/browser.ts';

const srv = await startTestServer(t);
const PASSWORD = 'a long enough password';
const owner = await newOrganization(srv, 'Assistant Org');
await setPassword(srv.deps.pool, owner.email, PASSWORD);
const mcpUrl = new URL(`${srv.url}/mcp`);

/** What an assistant keeps: its registration, the PKCE verifier, the tokens; the browser is the person's. */
class AssistantProvider implements OAuthClientProvider {
  registration: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  readonly redirectUrl = CALLBACK;
  readonly clientMetadata: OAuthClientMetadata = {
    client_name: 'Test assistant',
    redirect_uris: [CALLBACK],
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
    token_endpoint_auth_method: 'none',
  };
  clientInformation() {
    return this.registration;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.registration = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

t.test('discovery from the 401, registration, PKCE sign-in, then the tools', async (t) => {
  const provider = new AssistantProvider();
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await t.rejects(
    new Client({ name: 'assistant', version: '1' }).connect(first),
    { message: 'Unauthorized' },
    'sent to sign in',
  );
  t.type(provider.registration?.client_id, 'string', 'registered itself');
  const authorize = provider.authorizationUrl!;
  t.equal(authorize.origin + authorize.pathname, `${srv.url}/api/oauth/authorize`);
  t.equal(authorize.searchParams.get('resource'), mcpUrl.href, 'asks for the tool server');
  t.equal(authorize.searchParams.get('code_challenge_method'), 'S256');

  const callback = await signInAndAllow(new Browser(srv.url), authorize, owner.email, PASSWORD);
  await first.finishAuth(callback.searchParams.get('code')!);
  t.type(provider.saved?.access_token, 'string');

  const client = new Client({ name: 'assistant', version: '1' });
  await client.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
  t.teardown(() => client.close());
  t.equal((await client.listTools()).tools.length, 9);
  const me = (await client.callTool({ name: 'svc_whoami', arguments: {} })) as {
    content: { text: string }[];
  };
  const who = JSON.parse(me.content[0]!.text) as { id: string; credential: { clientId: string } };
  t.equal(who.id, owner.userId);
  t.equal(who.credential.clientId, provider.registration!.client_id, 'the registered client acts');
});

t.test('an expired token: 401 invalid_token, saying it expired', async (t) => {
  const provider = new AssistantProvider();
  const first = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
  await t.rejects(new Client({ name: 'assistant', version: '1' }).connect(first), {
    message: 'Unauthorized',
  });
  const callback = await signInAndAllow(
    new Browser(srv.url),
    provider.authorizationUrl!,
    owner.email,
    PASSWORD,
  );
  await first.finishAuth(callback.searchParams.get('code')!);
  const token = provider.saved!.access_token;
  await srv.deps.pool.query(
    `UPDATE oauth_models SET payload = jsonb_set(payload, '{exp}', '1') WHERE model = 'AccessToken' AND id = $1`,
    [token],
  );
  const res = await fetch(mcpUrl, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.equal(res.status, 401);
  t.match(res.headers.get('www-authenticate'), 'error="invalid_token"');
  const body = (await res.json()) as { error: { message: string; data: { errorCode: string } } };
  t.equal(body.error.data.errorCode, 'INVALID_ACCESS_TOKEN');
  t.equal(body.error.message, 'The access token has expired: refresh it');
});
