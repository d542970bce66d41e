// Every tool call is recorded in the activity log as an event of a chat, the specification's
// chat resource (chat.list lists them; activity.byEntity with subjectType chat lists a chat's
// calls). A chat is the conversation of one credential (an assistant's OAuth client, or an API
// key) of one person in one organization: calls within CHAT_IDLE_MINUTES of the previous one
// continue it, a later call starts another. Events are visible to that person only, as their chats are.
import { recordActivity, type FieldChanges } from '../activity/record.ts';
import type { Principal } from '../auth/principal.ts';
import { withTransaction, type Pool, type Queryable } from '../db/pool.ts';
import { CLI_CLIENT_ID, CLI_CLIENT_NAME } from '../oauth/urls.ts';

/** A quiet spell this long ends a conversation: the next call starts a new chat. */
export const CHAT_IDLE_MINUTES = 30;

export interface ToolCallRecord {
  tool: string;
  /** svc_api_call's procedure */
  procedure?: string;
  dryRun?: boolean;
  /** 'ok', or the errorCode of the tool error */
  outcome: string;
}

interface Chat {
  id: string;
  title: string;
}

/** What a chat is held with: 'oauth:<client id>' or 'api_key:<key id>'. */
function credentialOf(principal: Principal): string | undefined {
  if (principal.oauth) return `oauth:${principal.oauth.clientId}`;
  if (principal.apiKey) return `api_key:${principal.apiKey.id}`;
  return undefined;
}

/** How the chat is titled: the assistant's client name (or id), or the API key's name, and when it began. */
async function chatTitle(db: Queryable, principal: Principal): Promise<string> {
  let who: string;
  if (principal.oauth?.clientId === CLI_CLIENT_ID) {
    who = CLI_CLIENT_NAME;
  } else if (principal.oauth) {
    // a registered client (dynamic registration, or a fetched metadata document)
    const { rows } = await db.query<{ name: string | null }>(
      `SELECT payload->>'client_name' AS name FROM oauth_models WHERE model = 'Client' AND id = $1`,
      [principal.oauth.clientId],
    );
    who = rows[0]?.name ?? principal.oauth.clientId;
  } else {
    const { rows } = await db.query<{ name: string }>('SELECT name FROM api_keys WHERE id = $1', [
      principal.apiKey!.id,
    ]);
    who = `API key ${rows[0]?.name ?? principal.apiKey!.id}`;
  }
  return `${who.slice(0, 200)}, ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

/** The credential's live chat in the organization (touched now), or a new one. */
async function currentChat(
  db: Queryable,
  principal: Principal,
  organizationId: string,
  credential: string,
): Promise<Chat> {
  // one conversation at a time per credential: parallel calls must not each start one
  await db.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [
    `chat:${organizationId}:${principal.userId}:${credential}`,
  ]);
  const { rows } = await db.query<Chat>(
    `UPDATE chats SET updated_at = clock_timestamp()
     WHERE id = (SELECT id FROM chats WHERE organization_id = $1 AND user_id = $2 AND credential = $3
                   AND updated_at > clock_timestamp() - make_interval(mins => $4) ORDER BY updated_at DESC LIMIT 1)
     RETURNING id, title`,
    [organizationId, principal.userId, credential, CHAT_IDLE_MINUTES],
  );
  if (rows[0]) return rows[0];
  const created = await db.query<Chat>(
    'INSERT INTO chats (organization_id, user_id, credential, title) VALUES ($1, $2, $3, $4) RETURNING id, title',
    [organizationId, principal.userId, credential, await chatTitle(db, principal)],
  );
  return created.rows[0]!;
}

/** The call as the event's changes: what was called, and how it ended. */
function callChanges(call: ToolCallRecord): FieldChanges {
  const after = {
    tool: call.tool,
    ...(call.procedure ? { procedure: call.procedure } : {}),
    ...(call.dryRun ? { dryRun: true } : {}),
    outcome: call.outcome,
  };
  return { call: { before: null, after } };
}

/** Records one tool call in its chat of the organization (one the caller may act in: checked by the caller). */
export async function recordToolCall(
  pool: Pool,
  principal: Principal,
  organizationId: string,
  call: ToolCallRecord,
): Promise<void> {
  const credential = credentialOf(principal);
  if (!credential) return;
  await withTransaction(pool, async (db) => {
    const chat = await currentChat(db, principal, organizationId, credential);
    await recordActivity(db, principal, {
      organizationId,
      action: `mcp.${call.tool}`,
      subjectType: 'chat',
      subjectId: chat.id,
      subjectLabel: chat.title,
      changes: callChanges(call),
      visibleToUserId: principal.userId,
    });
  });
}
