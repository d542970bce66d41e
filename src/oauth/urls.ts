// The authorization server's public addresses, all from one base: PUBLIC_URL, else the address the
// API listens on (a wildcard interface read as localhost, which only this machine can reach).
import type { Config } from '../config.ts';

/** where the authorization server's endpoints live */
export const OAUTH_PREFIX = '/api/oauth';
/** the one scope: act as the person, with their roles, in their organizations */
export const API_SCOPE = 'api';
/** on a tool-server token: the assistant may run mutations too (the tool server is read-only without it) */
export const MCP_WRITE_SCOPE = 'mcp:write';
/** the first-party public client (command line), always registered */
export const CLI_CLIENT_ID = 'royalty-cli';
export const CLI_CLIENT_NAME = 'Royalty command-line client';

export interface OAuthUrls {
  /** the issuer: the service's base URL, no trailing slash */
  issuer: string;
  /** the issuer's path ('' at the root), before /api/oauth */
  basePath: string;
  /** the audience of tokens for the tRPC API */
  apiResource: string;
  /** the audience of tokens for the tool server */
  mcpResource: string;
}

export function oauthUrls(config: Pick<Config, 'publicUrl' | 'host'>, port: number): OAuthUrls {
  let issuer = config.publicUrl?.replace(/\/+$/, '');
  if (issuer === undefined) {
    const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
    issuer = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  }
  const basePath = new URL(issuer).pathname.replace(/\/+$/, '');
  return { issuer, basePath, apiResource: `${issuer}/trpc`, mcpResource: `${issuer}/mcp` };
}

/** a resource as compared: a fragment and one trailing slash do not matter (clients differ) */
export function normalizeResource(resource: string): string {
  return resource.replace(/#.*$/, '').replace(/\/$/, '');
}

/** RFC 9728 protected-resource metadata of the API or the tool server. */
export function protectedResourceMetadata(
  urls: OAuthUrls,
  which: 'api' | 'mcp',
): Record<string, unknown> {
  return {
    resource: which === 'api' ? urls.apiResource : urls.mcpResource,
    authorization_servers: [urls.issuer],
    bearer_methods_supported: ['header'],
    scopes_supported: which === 'api' ? [API_SCOPE] : [API_SCOPE, MCP_WRITE_SCOPE],
    resource_name: which === 'api' ? 'Royalty API' : 'Royalty tool server',
  };
}

/** Where a resource's metadata is served. */
export function resourceMetadataUrl(urls: OAuthUrls, which: 'api' | 'mcp'): string {
  return `${urls.issuer}/.well-known/oauth-protected-resource/${which === 'api' ? 'trpc' : 'mcp'}`;
}
