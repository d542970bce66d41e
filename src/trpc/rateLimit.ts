// Which procedures are rate limited, in which group (src/net/rateLimit.ts counts them). Counted
// in the procedure chain, once the caller is authenticated and before anything else is read or
// done, so each call of a batch counts: a batch of 50 presigned URLs spends 50 of the budget.
import type { RateLimitGroup } from '../config.ts';
import type { Principal } from '../auth/principal.ts';
import type { Context } from './context.ts';

/** The procedures of each group: those that mint URLs, run SQL or analytics, build exports, invite, ask a provider. */
export const procedureGroups: ReadonlyMap<string, RateLimitGroup> = new Map(
  Object.entries({
    // each answer holds presigned object-store URLs
    'upload.uploadFile': 'urls',
    'upload.heartbeat': 'urls',
    'fileStorage.downloadStatementFile': 'urls',
    'export.downloadFile': 'urls',
    // a poll with a body not yet known starts the statement, as the first call does
    'cube.sqlQuery': 'sql',
    'cube.sqlQueryAsync': 'sql',
    'cube.sqlQueryPoll': 'sql',
    'cube.query': 'cube',
    'cube.queryAsync': 'cube',
    'cube.queryPoll': 'cube',
    'export.trigger': 'exports',
    // each sends or re-issues an invitation link
    'organization.addUser': 'invitations',
    'organization.resendInvitation': 'invitations',
    'organization.getInvitationLink': 'invitations',
    // answered by an outside provider when one is configured (MARKET_PROVIDER=yahoo,
    // ENRICHMENT_PROVIDER=musicbrainz), each call a request of ours that it may hold against us
    'market.getQuotes': 'providers',
    'market.getHistory': 'providers',
    'market.getTreasuryYields': 'providers',
    'musicEnrichment.query': 'providers',
  } satisfies Record<string, RateLimitGroup>),
);

/** Counts the call when its procedure has a group; throws TOO_MANY_REQUESTS over a budget. */
export async function takeRateLimit(
  ctx: Context,
  path: string,
  principal: Principal,
): Promise<void> {
  const group = procedureGroups.get(path);
  if (group === undefined || !ctx.limits) return;
  await ctx.limits.take(group, { principal: principal.userId, address: ctx.address });
}
