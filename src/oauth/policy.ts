// What a client may register (RFC 7591) or publish as its Client ID Metadata Document: redirect
// URIs on the loopback interface (http, any port) or https, a short name. Built-in clients pass it too.
import type { ClientMetadata } from 'oidc-provider';

export interface OAuthPolicy {
  /** a registered client that never obtained a token is removed after this long */
  unusedClientTtlSeconds: number;
  /** largest Client ID Metadata Document fetched (bytes) */
  metadataDocumentMaxBytes: number;
  /** hosts (OAUTH_METADATA_DOCUMENT_HOSTS) fetched without the guard against private addresses */
  metadataDocumentHosts: readonly string[];
}

export const CLIENT_NAME_MAX = 100;
export const REDIRECT_URIS_MAX = 10;

export function isLoopbackHttp(uri: string): boolean {
  try {
    const url = new URL(uri);
    return url.protocol === 'http:' && ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
  } catch {
    return false;
  }
}

function redirectProblem(uri: string): string | undefined {
  if (isLoopbackHttp(uri)) return undefined;
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return `redirect_uris: ${uri.slice(0, 100)} is not a URL`;
  }
  if (url.protocol !== 'https:')
    return 'redirect_uris must be https URLs or http URLs on the loopback interface (127.0.0.1, [::1], localhost)';
  return undefined;
}

/** Why the client is refused, or undefined. */
export function clientPolicyProblem(
  metadata: Partial<ClientMetadata>,
  _policy: OAuthPolicy,
): string | undefined {
  const name = metadata.client_name;
  if (typeof name === 'string' && [...name].length > CLIENT_NAME_MAX)
    return `client_name has at most ${CLIENT_NAME_MAX} characters`;
  const uris = metadata.redirect_uris ?? [];
  if (uris.length > REDIRECT_URIS_MAX) return `at most ${REDIRECT_URIS_MAX} redirect_uris`;
  for (const uri of uris) {
    const problem = redirectProblem(uri);
    if (problem) return problem;
  }
  return undefined;
}
