// The sign-in pages: plain server-rendered HTML forms, usable without JavaScript, with no asset
// from elsewhere. The one stylesheet is inline and allowed by its hash, so the Content-Security-
// Policy allows nothing else (no script at all). form-action is left out on purpose: Chromium
// applies it to the redirects that follow a form, and consent ends in a redirect to the client.
import { createHash } from 'node:crypto';

const CSS =
  'body{font-family:system-ui,sans-serif;max-width:26rem;margin:3rem auto;padding:0 1rem;color:#222}' +
  'label{display:block;margin:.8rem 0 .2rem}input[type=email],input[type=password],input[type=text]{width:100%;box-sizing:border-box;padding:.5rem;font-size:1rem}' +
  'button{margin-top:1rem;padding:.5rem 1rem;font-size:1rem}button:focus,input:focus,a:focus{outline:3px solid #1a5fb4;outline-offset:2px}' +
  '.error{color:#a51d2d}.code{font-size:1.6rem;letter-spacing:.1em}li{margin:.3rem 0}';

const STYLE_HASH = createHash('sha256').update(CSS).digest('base64');

export const PAGE_HEADERS: Record<string, string> = {
  'content-type': 'text/html; charset=utf-8',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; img-src data:; frame-ancestors 'none'; base-uri 'none'`,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
};

export function escapeHtml(text: unknown): string {
  return String(text).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/** A page: its title as the heading; `body` is HTML already escaped. */
export function page(title: string, body: string): string {
  return `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<link rel="icon" href="data:,">
<style>${CSS}</style>
</head>
<body>
<main>
<h1>${escapeHtml(title)}</h1>
${body}
</main>
</body>
</html>
`;
}

function errorLine(message: string | undefined): string {
  return message ? `<p class="error" role="alert">${escapeHtml(message)}</p>` : '';
}

export function loginPage(args: {
  action: string;
  abortAction: string;
  csrf: string;
  clientName: string;
  email?: string;
  error?: string;
}): string {
  return page(
    'Sign in',
    `<p>${escapeHtml(args.clientName)} asks you to sign in to the royalty service.</p>
${errorLine(args.error)}
<form method="post" action="${escapeHtml(args.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrf)}">
<label for="email">E-mail</label>
<input id="email" type="email" name="email" autocomplete="username" required autofocus value="${escapeHtml(args.email ?? '')}">
<label for="password">Password</label>
<input id="password" type="password" name="password" autocomplete="current-password" required>
<button type="submit">Sign in</button>
</form>
<form method="post" action="${escapeHtml(args.abortAction)}">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrf)}">
<button type="submit">Cancel</button>
</form>
<p>Forgot your password? Ask the operator of this service to set a new one.</p>`,
  );
}

export function consentPage(args: {
  action: string;
  csrf: string;
  clientName: string;
  clientId: string;
  email: string;
  resources: string[];
  scopes: string[];
}): string {
  const reach = args.resources.map((r) => `<li>${escapeHtml(r)}</li>`).join('');
  return page(
    'Allow access?',
    `<p><strong>${escapeHtml(args.clientName)}</strong> (${escapeHtml(args.clientId)}) asks to act as <strong>${escapeHtml(args.email)}</strong>
in every organization you belong to, with your roles there.</p>
<p>It will reach:</p>
<ul>${reach}</ul>
${args.scopes.length > 0 ? `<p>Scopes: ${args.scopes.map(escapeHtml).join(', ')}</p>` : ''}
<form method="post" action="${escapeHtml(args.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(args.csrf)}">
<button type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button>
</form>`,
  );
}

export function messagePage(title: string, message: string): string {
  return page(title, `<p>${escapeHtml(message)}</p>`);
}

export function userCodePage(args: { action: string; xsrf: string; error?: string }): string {
  return page(
    'Connect a device',
    `<p>Enter the code your device shows.</p>
${errorLine(args.error)}
<form method="post" action="${escapeHtml(args.action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(args.xsrf)}">
<label for="user_code">Code</label>
<input id="user_code" class="code" type="text" name="user_code" autocomplete="off" autocapitalize="characters" spellcheck="false" required autofocus>
<button type="submit">Continue</button>
</form>`,
  );
}

export function userCodeConfirmPage(args: {
  action: string;
  xsrf: string;
  userCode: string;
  clientName: string;
}): string {
  const hidden = `<input type="hidden" name="xsrf" value="${escapeHtml(args.xsrf)}">
<input type="hidden" name="user_code" value="${escapeHtml(args.userCode)}">`;
  return page(
    'Confirm the device',
    `<p><strong>${escapeHtml(args.clientName)}</strong> asks to sign in. Go on only if your device shows this code:</p>
<p class="code">${escapeHtml(args.userCode)}</p>
<form method="post" action="${escapeHtml(args.action)}">
${hidden}
<input type="hidden" name="confirm" value="yes">
<button type="submit">Continue</button>
</form>
<form method="post" action="${escapeHtml(args.action)}">
${hidden}
<input type="hidden" name="abort" value="yes">
<button type="submit">Abort</button>
</form>`,
  );
}

export function logoutPage(args: { action: string; xsrf: string }): string {
  return page(
    'Sign out',
    `<p>Sign out of the royalty service in this browser?</p>
<form method="post" action="${escapeHtml(args.action)}">
<input type="hidden" name="xsrf" value="${escapeHtml(args.xsrf)}">
<button type="submit" name="logout" value="yes">Sign out</button>
<button type="submit">Stay signed in</button>
</form>`,
  );
}
