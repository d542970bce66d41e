// The login and consent pages of an oidc-provider interaction (GET shows, POST decides). Each form
// carries an anti-forgery token bound to the interaction (an HMAC of its uid under the cookie
// secret), on top of oidc-provider's own check that the browser holds the interaction's cookie.
import { createHmac, timingSafeEqual } from 'node:crypto';
import formbody from '@fastify/formbody';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type Provider from 'oidc-provider';
import type { Pool } from '../db/pool.ts';
import { INVITATION_PAGE, invitationPageRoutes } from './invitationPage.ts';
import type { RateLimits } from '../net/rateLimit.ts';
import { signInFailed, signInSucceeded, signInWait } from './limits.ts';
import { consentPage, loginPage, messagePage, PAGE_HEADERS } from './pages.ts';
import { checkPassword } from './passwords.ts';
import { API_SCOPE, OAUTH_PREFIX, type OAuthUrls } from './urls.ts';

export interface InteractionDeps {
  pool: Pool;
  limits: RateLimits;
  provider(): Promise<Provider>;
  cookieSecrets(): Promise<string[]>;
  urls(): OAuthUrls;
}

type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;
type Form = Record<string, string | undefined>;

function csrfToken(secret: string, uid: string): string {
  return createHmac('sha256', secret).update(`csrf:${uid}`).digest('base64url');
}

function csrfValid(secrets: string[], uid: string, given: unknown): boolean {
  if (typeof given !== 'string') return false;
  const got = Buffer.from(given);
  return secrets.some((s) => {
    const want = Buffer.from(csrfToken(s, uid));
    return want.length === got.length && timingSafeEqual(want, got);
  });
}

function send(reply: FastifyReply, status: number, html: string): FastifyReply {
  return reply.status(status).headers(PAGE_HEADERS).send(html);
}

const EXPIRED =
  'This sign-in has expired, or was started in another browser. Go back to the application and start again.';

/** The interaction the browser's cookie names, if it is the one in the URL. */
async function interactionOf(
  deps: InteractionDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<{ provider: Provider; interaction: Interaction } | undefined> {
  const provider = await deps.provider();
  try {
    const interaction = await provider.interactionDetails(req.raw, reply.raw);
    if (interaction.uid !== (req.params as { uid: string }).uid) return undefined;
    return { provider, interaction };
  } catch {
    return undefined;
  }
}

async function clientName(provider: Provider, interaction: Interaction): Promise<string> {
  const client = await provider.Client.find(String(interaction.params.client_id));
  return client?.clientName ?? String(interaction.params.client_id);
}

/** The consent page: who asks, for which account, on which resources and scopes. */
async function consentPageOf(
  deps: InteractionDeps,
  interaction: Interaction,
  form: { action: string; csrf: string; clientName: string },
): Promise<string> {
  const details = interaction.prompt.details as {
    missingResourceScopes?: Record<string, string[]>;
  };
  const resources = Object.keys(details.missingResourceScopes ?? {});
  const requested = interaction.params.resource;
  if (resources.length === 0)
    resources.push(typeof requested === 'string' ? requested : deps.urls().apiResource);
  const { rows } = await deps.pool.query<{ email: string }>(
    'SELECT email FROM users WHERE id::text = $1',
    [interaction.session?.accountId ?? ''],
  );
  const scopes = String(interaction.params.scope ?? '')
    .split(' ')
    .filter(Boolean);
  return consentPage({
    ...form,
    clientId: String(interaction.params.client_id),
    email: rows[0]?.email ?? '',
    resources,
    scopes,
  });
}

/** The page of the interaction's prompt: login or consent. */
async function showPage(
  deps: InteractionDeps,
  reply: FastifyReply,
  provider: Provider,
  interaction: Interaction,
  extra: { error?: string; email?: string; status?: number } = {},
): Promise<FastifyReply> {
  const base = `${deps.urls().basePath}${OAUTH_PREFIX}/interaction/${interaction.uid}`;
  const csrf = csrfToken((await deps.cookieSecrets())[0]!, interaction.uid);
  const name = await clientName(provider, interaction);
  const html =
    interaction.prompt.name === 'login'
      ? loginPage({
          action: `${base}/login`,
          abortAction: `${base}/abort`,
          csrf,
          clientName: name,
          ...extra,
        })
      : await consentPageOf(deps, interaction, {
          action: `${base}/consent`,
          csrf,
          clientName: name,
        });
  return send(reply, extra.status ?? 200, html);
}

/** The interaction and a valid anti-forgery token, or the page saying why not. */
async function checkedPost(deps: InteractionDeps, req: FastifyRequest, reply: FastifyReply) {
  const found = await interactionOf(deps, req, reply);
  if (!found) {
    send(reply, 400, messagePage('Sign-in expired', EXPIRED));
    return undefined;
  }
  const form = (req.body ?? {}) as Form;
  if (!csrfValid(await deps.cookieSecrets(), found.interaction.uid, form.csrf)) {
    send(
      reply,
      403,
      messagePage(
        'Request refused',
        "This form was not sent from this service's own page. Go back to the application and start again.",
      ),
    );
    return undefined;
  }
  return { ...found, form };
}

/** Ends the interaction with its result and sends the browser back to oidc-provider. */
async function finish(
  req: FastifyRequest,
  reply: FastifyReply,
  provider: Provider,
  result: Record<string, unknown>,
): Promise<FastifyReply> {
  const to = await provider.interactionResult(req.raw, reply.raw, result, {
    mergeWithLastSubmission: false,
  });
  return reply.status(303).header('cache-control', 'no-store').header('location', to).send();
}

/** GET /interaction/:uid: the page of the interaction's prompt. */
async function showInteraction(
  deps: InteractionDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const found = await interactionOf(deps, req, reply);
  if (!found) return send(reply, 400, messagePage('Sign-in expired', EXPIRED));
  return showPage(deps, reply, found.provider, found.interaction);
}

/** POST /interaction/:uid/login: the e-mail and password checked, within the sign-in limits. */
async function postLogin(
  deps: InteractionDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const checked = await checkedPost(deps, req, reply);
  if (!checked) return reply;
  const { provider, interaction, form } = checked;
  if (interaction.prompt.name !== 'login') return showPage(deps, reply, provider, interaction);
  const email = (form.email ?? '').slice(0, 320);
  const password = (form.password ?? '').slice(0, 4096);
  const wait = await signInWait(deps.limits, email, req.ip);
  if (wait > 0) {
    const minutes = Math.ceil(wait / 60);
    void reply.header('retry-after', String(wait));
    return showPage(deps, reply, provider, interaction, {
      email,
      status: 429,
      error: `Too many failed sign-ins. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`,
    });
  }
  const userId = email && password ? await checkPassword(deps.pool, email, password) : null;
  if (!userId) {
    await signInFailed(deps.limits, email, req.ip);
    // the same words whether or not the e-mail has an account
    return showPage(deps, reply, provider, interaction, {
      email,
      error: 'The e-mail or the password is not right.',
    });
  }
  await signInSucceeded(deps.limits, email);
  return finish(req, reply, provider, { login: { accountId: userId } });
}

/** POST /interaction/:uid/consent: the grant saved when allowed, access_denied otherwise. */
async function postConsent(
  deps: InteractionDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const checked = await checkedPost(deps, req, reply);
  if (!checked) return reply;
  const { provider, interaction, form } = checked;
  if (interaction.prompt.name !== 'consent') return showPage(deps, reply, provider, interaction);
  if (form.decision !== 'allow') {
    return finish(req, reply, provider, {
      error: 'access_denied',
      error_description: 'The person did not allow access',
    });
  }
  return finish(req, reply, provider, {
    consent: { grantId: await saveGrant(provider, interaction) },
  });
}

/** POST /interaction/:uid/abort: the sign-in cancelled. */
async function postAbort(
  deps: InteractionDeps,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<FastifyReply> {
  const checked = await checkedPost(deps, req, reply);
  if (!checked) return reply;
  return finish(req, reply, checked.provider, {
    error: 'access_denied',
    error_description: 'The person cancelled the sign-in',
  });
}

/** The sign-in routes: the invitation page and an interaction's page, login, consent and abort. */
export async function interactionRoutes(
  app: FastifyInstance,
  deps: InteractionDeps,
): Promise<void> {
  await app.register(
    async (scope) => {
      // form posts are read here only: the API's parsers stay as they are
      await scope.register(formbody, { bodyLimit: 16 * 1024 });
      invitationPageRoutes(scope, {
        pool: deps.pool,
        limits: deps.limits,
        action: () => `${deps.urls().basePath}${OAUTH_PREFIX}${INVITATION_PAGE}`,
      });
      scope.get('/interaction/:uid', (req, reply) => showInteraction(deps, req, reply));
      scope.post('/interaction/:uid/login', (req, reply) => postLogin(deps, req, reply));
      scope.post('/interaction/:uid/consent', (req, reply) => postConsent(deps, req, reply));
      scope.post('/interaction/:uid/abort', (req, reply) => postAbort(deps, req, reply));
    },
    { prefix: OAUTH_PREFIX },
  );
}

/** The grant the person allowed: what the client asked for, the API scope on the resource. */
async function saveGrant(provider: Provider, interaction: Interaction): Promise<string> {
  const details = interaction.prompt.details as {
    missingOIDCScope?: string[];
    missingOIDCClaims?: string[];
    missingResourceScopes?: Record<string, string[]>;
  };
  const grant = interaction.grantId
    ? ((await provider.Grant.find(interaction.grantId)) ??
      new provider.Grant({
        accountId: interaction.session!.accountId,
        clientId: String(interaction.params.client_id),
      }))
    : new provider.Grant({
        accountId: interaction.session!.accountId,
        clientId: String(interaction.params.client_id),
      });
  if (details.missingOIDCScope) grant.addOIDCScope(details.missingOIDCScope.join(' '));
  if (details.missingOIDCClaims) grant.addOIDCClaims(details.missingOIDCClaims);
  for (const [indicator, scopes] of Object.entries(details.missingResourceScopes ?? {})) {
    grant.addResourceScope(indicator, scopes.length > 0 ? scopes.join(' ') : API_SCOPE);
  }
  return grant.save();
}
