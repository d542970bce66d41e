// The OAuth flows of `royalty login`, through oauth4webapi: the device flow (RFC 8628, the
// default: it works over SSH and needs no port), the browser flow with PKCE and a loopback
// redirect (RFC 8252, `--web`), the refresh (rotating refresh tokens) and the revocation on logout.
// The client is the first-party public client `royalty-cli`.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import * as oauth from 'oauth4webapi';
import type { StoredTokens } from './profiles.ts';

export const CLI_CLIENT: oauth.Client = { client_id: 'royalty-cli' };
const SCOPE = 'api';

/** http: is allowed only for a server on plain HTTP (a local install); https everywhere else */
function requestOptions(url: string) {
  return new URL(url).protocol === 'http:' ? { [oauth.allowInsecureRequests]: true } : {};
}

export async function discover(baseUrl: string): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(baseUrl);
  const res = await oauth.discoveryRequest(issuer, {
    algorithm: 'oauth2',
    ...requestOptions(baseUrl),
  });
  return oauth.processDiscoveryResponse(issuer, res);
}

function stored(response: oauth.TokenEndpointResponse): StoredTokens {
  return {
    accessToken: response.access_token,
    ...(response.refresh_token ? { refreshToken: response.refresh_token } : {}),
    expiresAt: Date.now() + (response.expires_in ?? 3600) * 1000,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export interface DevicePrompt {
  userCode: string;
  verificationUri: string;
  verificationUriComplete: string | undefined;
}

/** The device flow: `prompt` shows the code to the person, then the token endpoint is polled. */
export async function deviceLogin(
  baseUrl: string,
  prompt: (p: DevicePrompt) => void,
): Promise<StoredTokens> {
  const as = await discover(baseUrl);
  const options = requestOptions(baseUrl);
  const device = await oauth.processDeviceAuthorizationResponse(
    as,
    CLI_CLIENT,
    await oauth.deviceAuthorizationRequest(as, CLI_CLIENT, oauth.None(), { scope: SCOPE }, options),
  );
  prompt({
    userCode: device.user_code,
    verificationUri: device.verification_uri,
    verificationUriComplete: device.verification_uri_complete,
  });
  // RFC 8628 3.2: 5 seconds when the server names no interval; slow_down adds 5
  let interval = (device.interval ?? 5) * 1000;
  const deadline = Date.now() + device.expires_in * 1000;
  while (Date.now() < deadline) {
    await sleep(interval);
    try {
      const res = await oauth.deviceCodeGrantRequest(
        as,
        CLI_CLIENT,
        oauth.None(),
        device.device_code,
        options,
      );
      return stored(await oauth.processDeviceCodeResponse(as, CLI_CLIENT, res));
    } catch (error) {
      if (error instanceof oauth.ResponseBodyError && error.error === 'authorization_pending')
        continue;
      if (error instanceof oauth.ResponseBodyError && error.error === 'slow_down') {
        interval += 5000;
        continue;
      }
      throw error;
    }
  }
  throw new Error('The code expired before it was approved; run royalty login again');
}

const DONE_PAGE =
  '<!doctype html><meta charset="utf-8"><title>Signed in</title><p>royalty is signed in. You can close this page.</p>';

/** Waits for the one redirect to http://127.0.0.1:<port>/callback; the URL it arrived at. */
function loopbackCallback(): Promise<{
  redirectUri: string;
  callback: Promise<URL>;
  close: () => void;
}> {
  return new Promise((resolve, reject) => {
    let deliver: (url: URL) => void;
    const callback = new Promise<URL>((r) => (deliver = r));
    const server = http.createServer((req, res) => {
      const url = new URL(
        req.url ?? '/',
        `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      );
      if (url.pathname !== '/callback') {
        res.writeHead(404).end();
        return;
      }
      res
        .writeHead(200, {
          'content-type': 'text/html; charset=utf-8',
          'content-security-policy': "default-src 'none'",
        })
        .end(DONE_PAGE);
      deliver(url);
    });
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      resolve({
        redirectUri: `http://127.0.0.1:${port}/callback`,
        callback,
        close: () => server.close(),
      });
    });
  });
}

/** The browser flow: PKCE, a loopback redirect on a free port; `open` shows the page to the person. */
export async function webLogin(
  baseUrl: string,
  open: (url: string) => Promise<void>,
): Promise<StoredTokens> {
  const as = await discover(baseUrl);
  const loopback = await loopbackCallback();
  try {
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: CLI_CLIENT.client_id,
      response_type: 'code',
      redirect_uri: loopback.redirectUri,
      scope: SCOPE,
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    await open(url.href);
    const params = oauth.validateAuthResponse(as, CLI_CLIENT, await loopback.callback, state);
    const res = await oauth.authorizationCodeGrantRequest(
      as,
      CLI_CLIENT,
      oauth.None(),
      params,
      loopback.redirectUri,
      verifier,
      requestOptions(baseUrl),
    );
    return stored(await oauth.processAuthorizationCodeResponse(as, CLI_CLIENT, res));
  } finally {
    loopback.close();
  }
}

export async function refreshTokens(baseUrl: string, refreshToken: string): Promise<StoredTokens> {
  const as = await discover(baseUrl);
  const res = await oauth.refreshTokenGrantRequest(
    as,
    CLI_CLIENT,
    oauth.None(),
    refreshToken,
    requestOptions(baseUrl),
  );
  return stored(await oauth.processRefreshTokenResponse(as, CLI_CLIENT, res));
}

/** Revokes a refresh token (RFC 7009): its whole login ends on the server. */
export async function revoke(baseUrl: string, token: string): Promise<void> {
  const as = await discover(baseUrl);
  if (!as.revocation_endpoint) return;
  const res = await oauth.revocationRequest(as, CLI_CLIENT, oauth.None(), token, {
    ...requestOptions(baseUrl),
    additionalParameters: { token_type_hint: 'refresh_token' },
  });
  await oauth.processRevocationResponse(res);
}
