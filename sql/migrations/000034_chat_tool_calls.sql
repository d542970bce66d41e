-- The tool server's conversations (src/mcp/conversation.ts): each tool call is an activity event
-- of a chat, the chat of the caller's credential (an OAuth client, or an API key) in the
-- organization, continued while calls keep coming. NULL: a chat made otherwise.
ALTER TABLE chats ADD COLUMN credential text CHECK (length(credential) <= 300);
CREATE INDEX chats_credential_idx ON chats (organization_id, user_id, credential, updated_at DESC) WHERE credential IS NOT NULL;
