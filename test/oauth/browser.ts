// A person's browser without JavaScript, as the tests need it: cookies kept per name, redirects
// followed by hand (303 after a form, 302/303 of the authorization server) until they leave the
// service (the client's redirect URI), forms read from the HTML and posted back.
import * as oauth from 'oauth4webapi';
import type { TestServer } from '../helpers/server.ts';
import { API_SCOPE, CLI_CLIENT_ID } from '../../src/oauth/urls.ts';

export const CALLBACK = 'http://127.0.0.1:53682/callback';
export const insecure = { [oauth.allowInsecureRequests]: true } as const;

export interface Page {
  status: number;
  url: string;
  html: string;
  headers: Headers;
}

export class Browser {
  readonly cookies = new Map<string, string>();
  constructor(readonly origin: string) {}

  private keep(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const eq = pair!.indexOf('=');
      const name = pair!.slice(0, eq).trim();
      const value = pair!.slice(eq + 1).trim();
      if (/expires=Thu, 01 Jan 1970/i.test(line) || value === '') this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  async request(
    url: string,
    init: { method?: string; form?: Record<string, string>; headers?: Record<string, string> } = {},
  ): Promise<Response> {
    const headers: Record<string, string> = { ...init.headers };
    if (this.cookies.size > 0)
      headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    let body: string | undefined;
    if (init.form) {
      headers['content-type'] = 'application/x-www-form-urlencoded';
      body = new URLSearchParams(init.form).toString();
    }
    const res = await fetch(new URL(url, this.origin), {
      method: init.method ?? (body ? 'POST' : 'GET'),
      headers,
      body,
      redirect: 'manual',
    });
    this.keep(res.headers);
    return res;
  }

  /** Follows redirects inside the service; stops at a page, or at a redirect elsewhere (returned as url with status 0). */
  async go(
    url: string,
    init: { method?: string; form?: Record<string, string> } = {},
  ): Promise<Page> {
    let res = await this.request(url, init);
    let at = new URL(url, this.origin).href;
    for (let hops = 0; hops < 10 && res.status >= 300 && res.status < 400; hops++) {
      at = new URL(res.headers.get('location')!, at).href;
      if (new URL(at).origin !== this.origin)
        return { status: 0, url: at, html: '', headers: res.headers };
      res = await this.request(at);
    }
    return { status: res.status, url: at, html: await res.text(), headers: res.headers };
  }
}

/** The first form posting to a path containing `action`: its action and its hidden fields. */
export function formOf(
  html: string,
  action: string,
): { action: string; fields: Record<string, string> } {
  const forms = [...html.matchAll(/<form method="post" action="([^"]*)">([\s\S]*?)<\/form>/g)];
  const form = forms.find((f) => f[1]!.includes(action));
  if (!form) throw new Error(`no form posting to ${action} in:\n${html}`);
  const fields: Record<string, string> = {};
  for (const input of form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g))
    fields[input[1]!] = unescape(input[2]!);
  return { action: unescape(form[1]!), fields };
}

function unescape(s: string): string {
  return s.replace(/&#(\d+);/g, (_m, n: string) => String.fromCharCode(Number(n)));
}

export async function discover(srv: TestServer): Promise<oauth.AuthorizationServer> {
  const issuer = new URL(srv.url);
  const res = await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', ...insecure });
  return oauth.processDiscoveryResponse(issuer, res);
}

export interface Authorization {
  url: URL;
  verifier: string;
  state: string;
}

export async function authorizationUrl(
  as: oauth.AuthorizationServer,
  opts: {
    clientId?: string;
    redirectUri?: string;
    resource?: string;
    scope?: string;
    extra?: Record<string, string>;
  } = {},
): Promise<Authorization> {
  const verifier = oauth.generateRandomCodeVerifier();
  const state = oauth.generateRandomState();
  const url = new URL(as.authorization_endpoint!);
  url.searchParams.set('client_id', opts.clientId ?? CLI_CLIENT_ID);
  url.searchParams.set('response_type', 'code');
  url.searchParams.set('redirect_uri', opts.redirectUri ?? CALLBACK);
  url.searchParams.set('scope', opts.scope ?? API_SCOPE);
  url.searchParams.set('state', state);
  url.searchParams.set('code_challenge', await oauth.calculatePKCECodeChallenge(verifier));
  url.searchParams.set('code_challenge_method', 'S256');
  if (opts.resource) url.searchParams.set('resource', opts.resource);
  for (const [k, v] of Object.entries(opts.extra ?? {})) url.searchParams.set(k, v);
  return { url, verifier, state };
}

/** Signs in through the login form and allows on the consent form; the redirect to the client. */
export async function signInAndAllow(
  browser: Browser,
  start: URL,
  email: string,
  password: string,
): Promise<URL> {
  const login = await browser.go(start.href);
  if (login.status !== 200) throw new Error(`login page: ${login.status} ${login.html}`);
  const form = formOf(login.html, '/login');
  const consent = await browser.go(form.action, { form: { ...form.fields, email, password } });
  if (consent.status === 0) return new URL(consent.url);
  if (consent.status !== 200) throw new Error(`after login: ${consent.status} ${consent.html}`);
  const allow = formOf(consent.html, '/consent');
  const done = await browser.go(allow.action, { form: { ...allow.fields, decision: 'allow' } });
  if (done.status !== 0) throw new Error(`after consent: ${done.status} ${done.html}`);
  return new URL(done.url);
}

export interface Tokens {
  access_token: string;
  refresh_token?: string;
  expires_in?: number;
}

/** The code of a callback exchanged for tokens (PKCE verifier, optional resource). */
export async function exchange(
  as: oauth.AuthorizationServer,
  auth: Authorization,
  callback: URL,
  opts: { clientId?: string; redirectUri?: string; resource?: string } = {},
): Promise<Tokens> {
  const client: oauth.Client = { client_id: opts.clientId ?? CLI_CLIENT_ID };
  const params = oauth.validateAuthResponse(as, client, callback, auth.state);
  const res = await oauth.authorizationCodeGrantRequest(
    as,
    client,
    oauth.None(),
    params,
    opts.redirectUri ?? CALLBACK,
    auth.verifier,
    {
      ...insecure,
      ...(opts.resource ? { additionalParameters: { resource: opts.resource } } : {}),
    },
  );
  return (await oauth.processAuthorizationCodeResponse(as, client, res)) as Tokens;
}

/** A token endpoint call made by hand (form POST), for answers a client library would refuse. */
export async function tokenRequest(
  as: oauth.AuthorizationServer,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(as.token_endpoint!, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(form),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** A person signed in through the pages with the command-line client: its tokens. */
export async function tokensFor(
  srv: TestServer,
  email: string,
  password: string,
  opts: { resource?: string } = {},
): Promise<Tokens> {
  const as = await discover(srv);
  const auth = await authorizationUrl(as, opts);
  const callback = await signInAndAllow(new Browser(srv.url), auth.url, email, password);
  return exchange(as, auth, callback, opts);
}

/** A refresh as the specification describes it: a form POST, answered as sent. */
export function refresh(
  as: oauth.AuthorizationServer,
  refreshToken: string,
  extra: Record<string, string> = {},
) {
  return tokenRequest(as, {
    grant_type: 'refresh_token',
    client_id: CLI_CLIENT_ID,
    refresh_token: refreshToken,
    ...extra,
  });
}
